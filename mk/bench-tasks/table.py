"""The table of mk/bench-tasks.sh, on stdout, in Markdown: a row a task
of tests/e2e/tasks.bats, a column a sandbox (pass, fail: why, or n/a:
why), then the totals.  Run in the folder of tasks-TOOL.tap and
tasks-TOOL.why; TOOLS names the sandboxes, TITLES and WHYS hold a line
each for them (WHYS: why that one could not run here, or empty)."""

import os
import re

WIDTH = 70


def short(why):
    """One line of a reason, without the scratch folders' names."""
    why = re.sub(r"(/var)?/tmp/(tmp\.\w+/)+", ".../", why.strip())
    why = why.replace("|", "\\|")
    return why if len(why) <= WIDTH else why[:WIDTH - 3] + "..."


def results(tool):
    """{task: "pass" or "fail: why"} from tool's TAP and reasons."""
    why = {}
    try:
        with open("tasks-%s.why" % tool) as f:
            for line in f:
                name, _, reason = line.rstrip("\n").partition("\t")
                why.setdefault(name, reason)
    except FileNotFoundError:
        pass
    res = {}
    try:
        with open("tasks-%s.tap" % tool) as f:
            for line in f:
                m = re.match(r"(not )?ok \d+ (.*)$", line.rstrip("\n"))
                if not m:
                    continue
                name = m.group(2)
                if m.group(1):
                    res[name] = "fail: " + short(why.get(name) or
                                                 "see tasks-%s.tap" % tool)
                else:
                    res[name] = "pass"
    except FileNotFoundError:
        pass
    return res


def main():
    tools = os.environ["TOOLS"].split()
    titles = os.environ["TITLES"].split("\n")
    whys = os.environ["WHYS"].split("\n") + [""] * len(tools)
    res = {t: results(t) for t in tools}
    names = []
    for t in tools:
        for n in res[t]:
            if n not in names:
                names.append(n)
    print("| task | " + " | ".join(titles) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for n in names:
        row = []
        for i, t in enumerate(tools):
            if whys[i]:
                row.append("n/a: " + short(whys[i]))
            else:
                row.append(res[t].get(n, "n/a: not run"))
        print("| %s | %s |" % (re.sub(r"^task: ", "", n), " | ".join(row)))
    total = []
    for i, t in enumerate(tools):
        if whys[i]:
            total.append("%s n/a (%s)" % (titles[i], short(whys[i])))
        else:
            ok = sum(1 for v in res[t].values() if v == "pass")
            total.append("%s %d/%d" % (titles[i], ok, len(names)))
    print()
    print("Passed: " + ", ".join(total) + ".")


main()
