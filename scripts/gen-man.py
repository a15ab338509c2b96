#!/usr/bin/env python3
"""Write ingot's manual pages from its --help texts, so the two never drift.

    scripts/gen-man.py BUILD/ingot OUTDIR

ingot(1) comes from `ingot --help`, ingot-COMMAND(1) from `ingot COMMAND
--help`.  The help texts are laid out as man pages already (NAME, SYNOPSIS,
DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES): headings become .SH, the
NAME line becomes the whatis entry, and every other paragraph is kept as
written in a no-fill block, so `man` shows what `--help` shows.  Output is
deterministic (no dates, no host facts): the committed pages are checked
against a fresh run by tests/e2e/test-man.sh.
"""
import os
import re
import subprocess
import sys
import textwrap

SOURCE = "ingot"
# The .TH date: that of the release the pages describe, fixed so the
# pages are the same on every run (mandoc -Tlint wants one).
DATE = "2026-12-04"


SUBPAGES = [("attest", "enroll"), ("attest", "import"), ("attest", "fetch-manifest")]


def help_text(ingot, args):
    r = subprocess.run([ingot, *args, "--help"], capture_output=True, text=True,
                       env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"})
    if r.returncode != 0:
        sys.exit(f"gen-man: {' '.join([ingot, *args])} --help exited {r.returncode}")
    return r.stdout


def esc(line):
    """A line of text as roff: backslashes doubled, '-' as a hyphen, a
    leading '.' or "'" guarded so it is not a request."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def commands(top):
    """The first word of each entry in ingot --help's COMMANDS section."""
    out, inside = [], False
    for line in top.splitlines():
        if re.match(r"^[A-Z][A-Z ]+$", line):
            inside = line == "COMMANDS"
            continue
        m = re.match(r"^    ([a-z][a-z-]*)\b", line)
        if inside and m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def to_roff(text, page):
    out = [f'.TH {page.upper()} 1 {DATE} "{SOURCE}" "ingot manual"']
    section, body = None, []

    def flush():
        if section is None:
            return
        out.append(f".SH {section}")
        if section == "NAME":
            name = " ".join(l.strip() for l in body if l.strip())
            head, _, what = name.partition(" - ")
            head = head.replace(" ", "-")   # "ingot build" is page ingot-build
            # Filled text: broken at spaces, lines stay within 80 bytes.
            out.extend(textwrap.wrap(f"{esc(head)} \\- {esc(what)}", 80,
                                     break_long_words=False, break_on_hyphens=False))
            return
        lines = [l[4:] if l.startswith("    ") else l for l in body]
        while lines and not lines[-1].strip():
            lines.pop()
        out.append(".nf")
        out.extend(esc(l) if l.strip() else "" for l in lines)
        out.append(".fi")

    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Z ]+$", line):
            flush()
            section, body = line, []
        elif section is not None:
            body.append(line)
    flush()
    return "\n".join(out) + "\n"


def write(path, data):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(data)
    os.rename(tmp, path)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/gen-man.py BUILD/ingot OUTDIR")
    ingot, outdir = sys.argv[1:]
    top = help_text(ingot, [])
    cmds = commands(top)
    if not cmds:
        sys.exit("gen-man: no COMMANDS section in ingot --help")
    pages = {"ingot": to_roff(top + "\nSEE ALSO\n    " +
                              ", ".join(f"ingot-{c}(1)" for c in cmds) + "\n", "ingot")}
    for c in cmds:
        pages[f"ingot-{c}"] = to_roff(help_text(ingot, [c]) + "\nSEE ALSO\n    ingot(1)\n",
                                      f"ingot-{c}")
    # Steps with a help of their own get a page of their own.
    for parent, sub in SUBPAGES:
        pages[f"ingot-{parent}-{sub}"] = to_roff(
            help_text(ingot, [parent, sub]) + f"\nSEE ALSO\n    ingot-{parent}(1), ingot(1)\n",
            f"ingot-{parent}-{sub}")
    os.makedirs(outdir, exist_ok=True)
    for name, roff in sorted(pages.items()):
        write(os.path.join(outdir, f"{name}.1"), roff)


if __name__ == "__main__":
    main()
