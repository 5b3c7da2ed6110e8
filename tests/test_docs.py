"""The documentation cannot rot: the site (README.md and docs/) builds with every link and anchor
checked, and every command it shows parses as its program would parse it: kdtourney's with click's
parser (without running), a script's options against the script, pip's extras against
pyproject.toml; the Python and TOML examples are valid. The short commands are run by
test_docs_run.py."""

import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import click
import pytest

from kdtourney.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPERATORS = {"&&", "||", ";", "|", "&"}
PROJECT_SCRIPTS = ("benchmarks/", "examples/")  # scripts of the project (not a reader's own)


def fenced_blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, line number, text) of every fenced block of a Markdown page, in a list item
    too."""
    blocks, fence, language, start, lines = [], None, "", 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if fence is None:
            match = re.match(r"(`{3,})\s*([\w{}-]*)", stripped)
            if match:
                fence, language, start, lines = match.group(1), match.group(2), number + 1, []
        elif stripped == fence:
            blocks.append((language, start, textwrap.dedent("\n".join(lines))))
            fence = None
        else:
            lines.append(line)
    return blocks


def shell_commands(text: str) -> list[list[str]]:
    """The simple commands of a shell block: continued lines joined, comments dropped, split at
    &&, ||, ;, | and &, leading VAR=value assignments dropped."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = []
        for token in [*lexer, ";"]:
            if token not in OPERATORS:
                words.append(token)
                continue
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words.pop(0)
            if words:
                commands.append(words)
            words = []
    return commands


def documented_commands():
    """(where, words) of every command in a sh/bash block of the README and docs/."""
    found = []
    for page in PAGES:
        for language, line, text in fenced_blocks(page):
            if language in ("sh", "bash", "shell"):
                for words in shell_commands(text):
                    found.append((f"{page.relative_to(ROOT)}:{line}", words))
    return found


def parse_kdtourney(args: list[str]) -> click.Context:
    """Parse a kdtourney command line with click as the command would, without running it."""
    context = main.make_context("kdtourney", list(args))
    name, command, rest = main.resolve_command(context, context._protected_args + context.args)
    return command.make_context(name, rest, parent=context)


def check_script(script: Path, args: list[str], where: str):
    """A script the docs run exists and declares every option they give it."""
    assert script.is_file(), f"{where}: {script.relative_to(ROOT)} does not exist"
    source = script.read_text(encoding="utf-8")
    for arg in args:
        option = arg.split("=", 1)[0]
        if option.startswith("--"):
            assert re.search(rf"""["']{re.escape(option)}["']""", source), \
                f"{where}: {script.relative_to(ROOT)} has no option {option}"


def check_pip(args: list[str], where: str):
    """Every extra a pip command names is one of pyproject.toml's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    for arg in args:
        match = re.fullmatch(r"(?:\.|kdtourney)\[([\w,-]+)\]", arg)
        if match:
            unknown = set(match.group(1).split(",")) - extras
            assert not unknown, f"{where}: pip names extras {sorted(unknown)} that pyproject lacks"


def check_command(where: str, words: list[str]):
    program, args = words[0], words[1:]
    if program == "kdtourney":
        try:
            parse_kdtourney(args)
        except click.ClickException as error:
            pytest.fail(f"{where}: {shlex.join(words)}\n  {error.format_message()}")
    elif program in ("python", "python3") and args and args[0] == "-c":
        compile(args[1], where, "exec")
    elif program in ("python", "python3") and args and args[0].startswith(PROJECT_SCRIPTS):
        check_script(ROOT / args[0], args[1:], where)
    elif program == "pip" or (program in ("python", "python3") and args[:2] == ["-m", "pip"]):
        check_pip(args, where)
    elif program == "pytest":
        for arg in args:
            if not arg.startswith("-") and "/" in arg:
                assert (ROOT / arg.split("::")[0]).exists(), f"{where}: pytest {arg}: no such path"


def test_the_docs_show_commands_of_every_kind():
    programs = {words[0] for _, words in documented_commands()}
    assert {"kdtourney", "python", "pip"} <= programs


@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_command_on_the_page_parses(page):
    commands = [(where, words) for where, words in documented_commands()
                if where.startswith(page + ":")]
    for where, words in commands:
        check_command(where, words)


def test_a_wrong_option_or_value_in_a_documented_command_is_caught():
    with pytest.raises(click.UsageError, match="No such option"):
        parse_kdtourney(["run", "--bots", "greedy,random", "--gamez", "4"])
    with pytest.raises(click.ClickException, match="expects a number"):
        parse_kdtourney(["sprt", "--candidate", "greedy", "--baseline", "random", "--elo1", "x"])
    with pytest.raises(click.UsageError, match="No such command"):
        parse_kdtourney(["rnu", "--bots", "greedy"])


@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix() for p in PAGES])
def test_the_python_and_toml_examples_are_valid(page):
    for language, line, text in fenced_blocks(ROOT / page):
        if language == "python":
            compile(text, f"{page}:{line}", "exec")
        elif language == "toml":
            tomllib.loads(text)


@pytest.mark.slow
@pytest.mark.process
def test_the_site_builds_with_every_link_checked(tmp_path):
    """sphinx-build -W: a link to a missing page or anchor, in the README or a page, fails."""
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "commands.html").is_file()


LONG = {"sprt", "tune", "ladder", "play"}  # play until a test decides, for minutes, or until
#                                          a person has played: parsed, not run
SETUP = ("python3 -m venv", ". .venv/bin/activate", "pip install", "pytest")  # the clone's own


def readme_lines_to_run() -> list[tuple[str, str]]:
    """(where, line) of every line of the README's sh blocks, in order, without the steps that
    set up a clone (venv, pip, the tests) and but the long commands."""
    lines = []
    for language, start, text in fenced_blocks(ROOT / "README.md"):
        if language != "sh":
            continue
        for offset, line in enumerate(text.splitlines()):
            steps = [s for s in line.split(" && ") if s.strip() and not s.startswith(SETUP)]
            words = [w for step in steps for w in shell_commands(step)]
            if words and not any(w[:1] == ["kdtourney"] and w[1:2] and w[1] in LONG
                                 for w in words):
                lines.append((f"README.md:{start + offset}", " && ".join(steps)))
    return lines


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.timeout(600)  # some 15 commands, a minute in all on a quiet machine
def test_the_readme_s_short_commands_run_in_order(tmp_path):
    """The quick start's tournament, the five-minute path (but sprt) and one example per command
    (but sprt, tune, ladder and play), each as a reader types it, in a fresh folder beside the
    examples: every one exits 0."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("KDTOURNEY_BOTS_DIR", None)
    lines = readme_lines_to_run()
    ran = [line.split()[:2] for _, line in lines]
    assert ["kdtourney", "new-bot"] in ran and ["python", "bots/mine/mine.py"] in ran
    for where, line in lines:
        done = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}"], cwd=tmp_path, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, f"{where}: {line}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
