#!/usr/bin/env python3
"""The layer rule (docs/architecture.md): a file may include headers of its
own layer and of the layers listed for it below, nothing above. Prints one
line per upward include and exits 1 when there is any.

    tests/tools/check_layers.py [TOP]      (TOP defaults to the checkout)

Project headers are included by layer path ("model/model.h"); tui/ includes
its own headers by name. Anything else (system headers, bpf/ingero.h, the
generated skeleton) is looked up in the table of external headers."""
import os
import re
import sys

# layer -> layers it may include (besides itself), bottom to top.
ALLOWED = {
    "core":    set(),
    "collect": {"core", "bpf"},
    "store":   {"core"},
    "model":   {"core"},
    "stacks":  {"core", "store", "bpf"},
    "detect":  {"core", "model"},
    "session": {"core", "collect", "store", "model", "stacks", "detect"},
    "report":  {"core", "store", "model", "stacks", "detect"},
    "fleet":   {"core", "store"},
    "tui":     {"core", "store", "model", "stacks", "detect", "session", "report",
                "fleet"},
    "app":     {"core", "collect", "store", "model", "stacks", "detect", "session",
                "report", "fleet", "tui"},
    "bpf":     set(),
}
# headers that are not under src/<layer>/: which layer they belong to
EXTERNAL = {"ingero.h": "bpf", "ingero.skel.h": "bpf", "vmlinux.h": "bpf"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of_file(rel):
    parts = rel.split(os.sep)
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] in ("tui", "bpf"):
        return parts[0]
    return None


def layer_of_include(inc, includer_layer, top):
    head = inc.split("/")[0]
    if "/" in inc and head in ALLOWED:
        return head
    if inc in EXTERNAL:
        return EXTERNAL[inc]
    if includer_layer == "tui" and os.path.exists(os.path.join(top, "tui", inc)):
        return "tui"
    if includer_layer == "bpf" and os.path.exists(os.path.join(top, "bpf", inc)):
        return "bpf"
    return "?"


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = 0
    nfiles = 0
    for root in ("src", "tui", "bpf"):
        for dirpath, _, files in os.walk(os.path.join(top, root)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, top)
                layer = layer_of_file(rel)
                if layer is None or layer not in ALLOWED:
                    print(f"{rel}: not in a known layer (src/<layer>/, tui/, bpf/)")
                    bad += 1
                    continue
                nfiles += 1
                with open(path, errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        dep = layer_of_include(inc, layer, top)
                        if dep == "?":
                            print(f"{rel}:{lineno}: includes \"{inc}\": not a layer path "
                                  f"(write \"<layer>/{os.path.basename(inc)}\")")
                            bad += 1
                        elif dep != layer and dep not in ALLOWED[layer]:
                            print(f"{rel}:{lineno}: {layer} includes \"{inc}\" from {dep}, "
                                  f"which is not below it (allowed: "
                                  f"{', '.join(sorted(ALLOWED[layer])) or 'nothing'})")
                            bad += 1
    if bad:
        print(f"check-layers: {bad} include(s) break the layer rule")
        return 1
    print(f"check-layers: {nfiles} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
