"""Schedules: `[[schedule]]` entries (name, cron, task) validated, and turned into OS scheduler entries.

Guards that what the operating system is told to run is exactly `assistant -w WS run TASK`
(or, for an entry with `command = "sync"` and no task, `assistant -w WS sync`) for a validated
entry: a malformed cron expression, an unsafe name or a task that cannot be
quoted safely is refused with a message naming the entry and the field, never written out.
There is no daemon here: cron or a systemd user timer does the scheduling.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import sys
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Sequence


class ScheduleError(ValueError):
    """A schedule entry or cron expression that cannot be used. The message says which and why."""


_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
# (field name, low, high, names)
_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
MAX_TASK_CHARS = 4000
COMMANDS = ("run", "sync")     # what an entry runs: a task (`run`, the default) or `sync`


@dataclass(frozen=True)
class Cron:
    """A parsed cron expression: the set of values each field allows."""

    expression: str                # as written (a macro like @daily kept)
    fields: str                    # the five fields (macros expanded), for crontab
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]       # 0 = Sunday .. 6 = Saturday (7 folded into 0)
    days_restricted: bool          # cron's rule: day-of-month field did not start with '*'
    weekdays_restricted: bool

    def matches_day(self, d: datetime) -> bool:
        if d.month not in self.months:
            return False
        dom = d.day in self.days
        dow = (d.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow            # cron: either one matching is enough
        return dom and dow

    def next_after(self, now: datetime) -> datetime | None:
        """The first minute strictly after `now` this expression fires (None if none within 5 years)."""
        start = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        for _ in range(5 * 366 + 1):
            if self.matches_day(day):
                for h in sorted(self.hours):
                    for m in sorted(self.minutes):
                        t = day.replace(hour=h, minute=m)
                        if t >= start:
                            return t
            day = day + timedelta(days=1)
        return None


def _value(token: str, field: str, lo: int, hi: int, names: dict[str, int], expr: str) -> int:
    key = token.lower()
    if key in names:
        return names[key]
    if not token.isdigit():
        raise ScheduleError(f"cron {expr!r}: {field}: {token!r} is not a number" +
                            (" or a name" if names else ""))
    v = int(token)
    if not lo <= v <= hi:
        raise ScheduleError(f"cron {expr!r}: {field}: {v} is outside {lo}-{hi}")
    return v


def _field(text: str, field: str, lo: int, hi: int, names: dict[str, int], expr: str) -> set[int]:
    out: set[int] = set()
    if text == "":
        raise ScheduleError(f"cron {expr!r}: {field} is empty")
    for part in text.split(","):
        if part == "":
            raise ScheduleError(f"cron {expr!r}: {field}: empty item in list {text!r}")
        rng, _, step_text = part.partition("/")
        step = 1
        if _:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"cron {expr!r}: {field}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if rng == "*":
            a, b = lo, hi
        elif "-" in rng:
            left, _, right = rng.partition("-")
            a = _value(left, field, lo, hi, names, expr)
            b = _value(right, field, lo, hi, names, expr)
            if a > b:
                raise ScheduleError(f"cron {expr!r}: {field}: range {rng!r} runs backwards")
        else:
            a = _value(rng, field, lo, hi, names, expr)
            b = hi if _ else a          # "5/15" means 5, 20, 35, 50
        out.update(range(a, b + 1, step))
    return out


def parse_cron(expression: str) -> Cron:
    """Parse a 5-field cron expression (or @daily-style macro). ScheduleError says what is wrong."""
    if not isinstance(expression, str):
        raise ScheduleError(f"cron expression must be a string, got {type(expression).__name__}")
    expr = expression.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in expr):
        raise ScheduleError(f"cron {expression!r}: control characters are not allowed")
    if expr.startswith("@"):
        if expr.lower() not in _MACROS:
            raise ScheduleError(f"cron {expression!r}: unknown macro (known: {', '.join(sorted(_MACROS))})")
        expr = _MACROS[expr.lower()]
    parts = expr.split()
    if len(parts) != 5:
        raise ScheduleError(
            f"cron {expression!r}: expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    sets = [_field(p, f, lo, hi, names, expression) for p, (f, lo, hi, names) in zip(parts, _FIELDS)]
    weekdays = {d % 7 for d in sets[4]}
    return Cron(
        expression=expression.strip(),
        fields=" ".join(parts),
        minutes=frozenset(sets[0]), hours=frozenset(sets[1]), days=frozenset(sets[2]),
        months=frozenset(sets[3]), weekdays=frozenset(weekdays),
        days_restricted=not parts[2].startswith("*"),
        weekdays_restricted=not parts[4].startswith("*"),
    )


@dataclass(frozen=True)
class Schedule:
    name: str
    cron: Cron
    task: str             # "" for command = "sync"
    command: str = "run"


def _check_task(task: object, where: str) -> str:
    if not isinstance(task, str) or not task.strip():
        raise ScheduleError(f"{where}: task must be a non-empty string")
    if len(task) > MAX_TASK_CHARS:
        raise ScheduleError(f"{where}: task is longer than {MAX_TASK_CHARS} characters")
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in task):
        raise ScheduleError(f"{where}: task must be one line without control characters")
    return task


def parse_schedules(raw: object) -> tuple[list[Schedule], list[str]]:
    """(the valid `[[schedule]]` entries, one message per problem): every problem of every entry."""
    if not isinstance(raw, list):
        return [], ["config.toml: schedules are written as [[schedule]] tables"]
    out: list[Schedule] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw, 1):
        schedule, bad = _entry(i, entry, seen)
        problems.extend(bad)
        if schedule is not None:
            out.append(schedule)
    return out, problems


def _entry(i: int, entry: object, seen: set[str]) -> tuple[Schedule | None, list[str]]:
    """One `[[schedule]]` table: the Schedule, or None and EVERY problem it has (a bad cron
    and an empty task in the same entry are both named)."""
    where = f"config.toml [[schedule]] #{i}"
    if not isinstance(entry, dict):
        return None, [f"{where}: must be a table with name, cron and task"]
    problems: list[str] = []
    unknown = set(entry) - {"name", "cron", "task", "command"}
    if unknown:
        problems.append(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: name, cron, task, command)")
    name = entry.get("name")
    if "name" not in entry:
        problems.append(f"{where}: missing name")
    elif not isinstance(name, str) or not _NAME_RE.match(name):
        problems.append(f"{where}: name {name!r} must be 1-64 letters, digits, '-' or '_', "
                        "starting with a letter or digit")
    else:
        where = f"config.toml schedule {name!r}"
        if name in seen:
            problems.append(f"{where}: the name is used twice")
        seen.add(name)
    cron = task = None
    if "cron" not in entry:
        problems.append(f"{where}: missing cron")
    else:
        try:
            cron = parse_cron(entry["cron"])
        except ScheduleError as exc:
            problems.append(f"{where}: {exc}")
    command = entry.get("command", "run")
    if command not in COMMANDS:
        problems.append(f"{where}: command must be one of {', '.join(repr(c) for c in COMMANDS)}, not {command!r}")
    if command == "sync":
        if "task" in entry:
            problems.append(f"{where}: a schedule with command = \"sync\" runs `assistant sync` and takes no task")
        else:
            task = ""
    elif "task" not in entry:
        problems.append(f"{where}: missing task")
    else:
        try:
            task = _check_task(entry["task"], where)
        except ScheduleError as exc:
            problems.append(str(exc))
    if problems or cron is None or task is None:
        return None, problems
    return Schedule(name=name, cron=cron, task=task, command=command if command in COMMANDS else "run"), []


def load_schedules(config: dict[str, Any]) -> list[Schedule]:
    """The validated `[[schedule]]` entries of a raw config document. Any bad entry refuses
    them all, and the error lists every bad entry."""
    schedules, problems = parse_schedules(config.get("schedule", []))
    if problems:
        raise ScheduleError("; ".join(problems))
    return schedules


def find_schedule(schedules: Sequence[Schedule], name: str) -> Schedule:
    for s in schedules:
        if s.name == name:
            return s
    known = ", ".join(s.name for s in schedules) or "none configured"
    raise ScheduleError(f"no schedule named {name!r} (known: {known})")


# ---- OS scheduler entries -------------------------------------------------------------------

def assistant_executable() -> str:
    """Absolute path of the `assistant` command of this installation."""
    beside = Path(sys.executable).parent / "assistant"
    if beside.is_file():
        return str(beside)
    found = shutil.which("assistant")
    return str(Path(found).absolute()) if found else "assistant"


def _breaks_a_line(c: str) -> bool:
    """A character a crontab line or a systemd unit line cannot carry as data: a control
    character (C0, DEL, C1: a newline ends the line, so what follows is a new entry or
    directive) or a Unicode line or paragraph separator."""
    return unicodedata.category(c) in ("Cc", "Zl", "Zp")


def _escaped(text: str) -> str:
    return "".join(c.encode("unicode_escape").decode("ascii") if _breaks_a_line(c) else c for c in text)


def check_scheduler_paths(workspace: Path, exe: str) -> None:
    """Refuse a workspace path or an `assistant` command path that cannot go into a crontab line
    or a systemd unit as one line: each is written there whole (in the command and in the
    marker comment), and a newline in it would start a line of its own (a crontab entry, a
    unit directive). No quoting carries a newline in both formats, so it is refused."""
    for value, what, fix in ((str(workspace), "workspace path", "move the workspace to a folder whose path has none"),
                             (exe, "assistant command's path", "install assistant where its path has none")):
        if any(_breaks_a_line(c) for c in value):
            raise ScheduleError(
                f"the {what} {_escaped(value)!r} holds a control or line-break character, which would "
                f"break the crontab line or systemd unit into lines of its own; nothing was written: {fix}")


def run_argv(workspace: Path, task: str, exe: str | None = None, command: str = "run") -> list[str]:
    """What the OS scheduler runs for an entry: `assistant -w WS run TASK`, or `assistant -w WS sync`."""
    if command == "sync":
        return [exe or assistant_executable(), "-w", str(workspace), "sync"]
    return [exe or assistant_executable(), "-w", str(workspace), "run", task]


def _block_marker(workspace: Path) -> tuple[str, str]:
    tag = f"assistant schedules for {workspace}"
    return f"# BEGIN {tag}", f"# END {tag}"


def crontab_lines(workspace: Path, schedules: list[Schedule], exe: str | None = None) -> list[str]:
    """Crontab lines (one per schedule, inside a marked block) running `assistant -w WS run TASK`.
    ScheduleError for a path that cannot be written as one line (`check_scheduler_paths`)."""
    exe = exe or assistant_executable()
    check_scheduler_paths(workspace, exe)
    begin, end = _block_marker(workspace)
    lines = [begin]
    for s in schedules:
        command = " ".join(_cron_quote(arg) for arg in run_argv(workspace, s.task, exe, s.command))
        lines.append(f"# {s.name}")
        lines.append(f"{s.cron.fields} {command}")
    lines.append(end)
    return lines


def _cron_quote(arg: str) -> str:
    """`arg` as one shell word in a crontab command. cron turns an unescaped % into a newline
    (what follows becomes the command's stdin) and takes `\\%` as a literal %, removing the
    backslash; a backslash of the argument's own right before a % would pair with that one and
    leave the % unescaped (review 23: a workspace path holding `\\%` cut the command in two).
    So inside shlex's single quotes each % is written `'\\%'`: the quote is closed, the % stands
    escaped outside it (a literal % to the shell), and the quote reopens."""
    quoted = shlex.quote(arg)
    if quoted.startswith("'"):
        return quoted.replace("%", "'\\%'")
    return quoted.replace("%", "\\%")      # a word shlex left bare holds no backslash


def merge_crontab(existing: str, workspace: Path, block: list[str]) -> str:
    """Replace this workspace's block in a crontab (or append it), keeping every other line."""
    begin, end = _block_marker(workspace)
    kept: list[str] = []
    inside = False
    for line in existing.splitlines():
        if line == begin:
            inside = True
            continue
        if line == end and inside:
            inside = False
            continue
        if not inside:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join([*kept, *([""] if kept else []), *block]) + "\n"


def _systemd_quote(arg: str) -> str:
    # Inside double quotes systemd honours C-style backslash escapes; % starts a specifier
    # and $ an environment variable, so both are doubled to be taken literally.
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def _compress(values: list[int], fmt: str = "{:02d}") -> str:
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{fmt.format(values[i])}..{fmt.format(values[j])}")
        else:
            parts.extend(fmt.format(v) for v in values[i:j + 1])
        i = j + 1
    return ",".join(parts)


_DOW_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]


def on_calendar(cron: Cron) -> list[str]:
    """systemd OnCalendar= values equivalent to a cron expression (two when cron's OR rule applies)."""
    def full(values: frozenset[int], lo: int, hi: int) -> bool:
        return set(values) == set(range(lo, hi + 1))

    month = "*" if full(cron.months, 1, 12) else _compress(sorted(cron.months))
    days = "*" if full(cron.days, 1, 31) else _compress(sorted(cron.days))
    hours = "*" if full(cron.hours, 0, 23) else _compress(sorted(cron.hours))
    minutes = "*" if full(cron.minutes, 0, 59) else _compress(sorted(cron.minutes))
    dows = ",".join(_DOW_NAMES[d] for d in sorted(cron.weekdays))
    all_dows = len(cron.weekdays) == 7
    time_part = f"{hours}:{minutes}:00"
    if cron.days_restricted and cron.weekdays_restricted:
        # cron fires when either the day of month or the day of week matches: a union of two.
        return [f"*-{month}-{days} {time_part}", f"{dows} *-{month}-* {time_part}"]
    prefix = "" if all_dows else f"{dows} "
    return [f"{prefix}*-{month}-{days} {time_part}"]


def unit_name(schedule: Schedule) -> str:
    return f"assistant-{schedule.name}"


def unit_marker(workspace: Path) -> str:
    """The line that marks a unit file as written for this workspace: its path and a digest of
    it. A unit is this workspace's only if one of its lines is exactly this (a substring test
    matched `/x/my` inside the marker of `/x/my ws`: review 23)."""
    ws_tag = hashlib.sha256(str(workspace).encode()).hexdigest()[:12]
    return f"# X-Assistant-Workspace={workspace} ({ws_tag})"


def written_for(unit_text: str, workspace: Path) -> bool:
    """Is the unit file text one written for this workspace (its marker line, exactly)?"""
    return unit_marker(workspace) in unit_text.splitlines()


def systemd_units(workspace: Path, schedules: list[Schedule], exe: str | None = None,
                  environment: dict[str, str] | None = None) -> dict[str, str]:
    """File name -> contents of a user .service and .timer per schedule. `environment`: extra
    Environment= lines the service needs (e.g. the session bus for a keyring unlock).
    ScheduleError for a path that cannot be written as one line (`check_scheduler_paths`)."""
    exe = exe or assistant_executable()
    check_scheduler_paths(workspace, exe)
    units: dict[str, str] = {}
    marker = unit_marker(workspace)
    for s in schedules:
        base = unit_name(s)
        exec_start = " ".join(_systemd_quote(a) for a in run_argv(workspace, s.task, exe, s.command))
        units[f"{base}.service"] = "\n".join([
            "[Unit]",
            f"Description=assistant scheduled run {s.name}",
            marker,
            "",
            "[Service]",
            "Type=oneshot",
            *(f"Environment={k}={v}" for k, v in sorted((environment or {}).items())),
            f"ExecStart={exec_start}",
            "",
        ])
        calendar_lines = [f"OnCalendar={c}" for c in on_calendar(s.cron)]
        units[f"{base}.timer"] = "\n".join([
            "[Unit]",
            f"Description=assistant schedule {s.name} ({s.cron.expression})",
            marker,
            "",
            "[Timer]",
            *calendar_lines,
            "Persistent=true",
            f"Unit={base}.service",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ])
    return units


def systemd_user_dir() -> Path:
    import os

    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"
