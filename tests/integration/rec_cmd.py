"""The command a live chain recommends, as a user would copy it: the text
after the last ": " of the last recommendation of a chain of CLASS that
holds ": MARKER", in a file of ingero-top --json frames (lines that are not
JSON are skipped). Prints it, or nothing.

    python3 rec_cmd.py FRAMES CLASS MARKER"""
import json
import sys

path, cls, marker = sys.argv[1:4]
cmd = ""
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    for c in o.get("chains", []):
        for r in c.get("recommendations", []) if c.get("class") == cls else []:
            if ": " + marker in r:
                cmd = r.rsplit(": ", 1)[1]
print(cmd)
