"""The model's tools. Each declares its policy kind; gated ones go through policy.gate."""
