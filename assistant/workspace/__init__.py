"""The workspace: its layout (layout.py), typed config.toml (config.py), the files kept out of
the file tools' sight (hidden.py) and schedules (schedule.py).

`assistant.workspace.Workspace` and the rest of layout.py's names import from here too.
"""

from assistant.workspace.layout import (
    CLEAN_INDEX, CLEAN_PERSONA, CONFIG, DEFAULT_WORKSPACE, ENV_WORKSPACE, FILES, GRANTS, HISTORY,
    MEMORY, PERSONA, STATE, VAULT, Workspace, WorkspaceError, example_dir, init_workspace,
    load_config, open_workspace, record_setting, select_workspace,
)

__all__ = [
    "CLEAN_INDEX", "CLEAN_PERSONA", "CONFIG", "DEFAULT_WORKSPACE", "ENV_WORKSPACE", "FILES",
    "GRANTS", "HISTORY", "MEMORY", "PERSONA", "STATE", "VAULT", "Workspace", "WorkspaceError",
    "example_dir", "init_workspace", "load_config", "open_workspace", "record_setting",
    "select_workspace",
]
