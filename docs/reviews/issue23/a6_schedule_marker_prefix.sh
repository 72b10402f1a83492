#!/bin/sh
# Attack 6: `schedule install --systemd --write` from a workspace whose path is a prefix (up to a
# space) of another workspace's path overwrites that other workspace's units: the "written for
# this workspace" check is a substring test of "# X-Assistant-Workspace=<path> ".
# Also: a workspace path holding "\%" breaks the crontab line (cron cuts the command at the %).
set -u
PY=/work/main/.venv/bin/python; export PYTHONPATH=$PWD
T=$(mktemp -d); export XDG_CONFIG_HOME=$T/xdg
$PY -m assistant init "$T/my ws" >/dev/null; $PY -m assistant init "$T/my" >/dev/null
$PY -m assistant -w "$T/my ws" schedule install --systemd --write
grep ExecStart $XDG_CONFIG_HOME/systemd/user/assistant-morning-review.service
echo "--- install from the other workspace $T/my:"
$PY -m assistant -w "$T/my" schedule install --systemd --write; echo "exit $?"
grep ExecStart $XDG_CONFIG_HOME/systemd/user/assistant-morning-review.service
echo "--- cron, workspace path with a backslash-percent:"
$PY -m assistant init "$T/a\\%b" >/dev/null
$PY -m assistant -w "$T/a\\%b" schedule install --cron --print | grep -v '^#'
rm -rf "$T"
