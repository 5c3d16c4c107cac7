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
    "analysis": {"core", "model", "detect"},
    "session": {"core", "collect", "store", "model", "stacks", "detect", "analysis"},
    "report":  {"core", "store", "model", "stacks", "detect", "analysis"},
    "serve":   {"core", "collect", "store", "model", "stacks", "detect", "analysis", "session",
                "report"},
    "fleet":   {"core", "store"},
    "tui":     {"core", "store", "model", "stacks", "detect", "analysis", "session",
                "report", "fleet"},
    "app":     {"core", "collect", "store", "model", "stacks", "detect", "analysis",
                "session", "report", "serve", "fleet", "tui"},
    "bpf":     set(),
}
# headers that are not under src/<layer>/: which layer they belong to
EXTERNAL = {"ingero.h": "bpf", "ingero.skel.h": "bpf", "vmlinux.h": "bpf"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SYSINCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
# third-party headers (<...>): the layers that may include them; a prefix
# ending in "/" stands for a directory of headers. The C library and the
# kernel's uapi headers are free for all.
THIRD_PARTY = {
    "bpf/": {"collect", "bpf"},
    "sqlite3.h": {"store"},
    "curses.h": {"tui"}, "ncurses.h": {"tui"}, "ncursesw/": {"tui"}, "term.h": {"tui"},
    "gelf.h": {"collect", "stacks"}, "libelf.h": {"collect", "stacks"},
    "elfutils/": {"collect", "stacks"}, "dwarf.h": {"collect", "stacks"},
    "libiberty/": {"stacks"}, "demangle.h": {"stacks"},
    # jansson: core's json.h/json.c wrap it; every layer above may use it
    "jansson.h": {"json", "collect", "store", "model", "stacks", "detect", "analysis",
                  "session", "report", "fleet", "tui", "app"},
}
# a layer that may see only some headers of another (layer -> {layer: headers})
ONLY = {"detect": {"model": {"model/window.h", "model/stats.h"}}}


def third_party_rule(inc):
    for key, layers in THIRD_PARTY.items():
        if inc == key or (key.endswith("/") and inc.startswith(key)):
            return key, layers
    return None, None


def check_system(rel, layer, lineno, inc):
    """A message when a <...> include is a library header the layer may not use."""
    key, layers = third_party_rule(inc)
    if key is None:
        return None
    who = layer
    if layer == "core" and os.path.basename(rel) in ("json.c", "json.h"):
        who = "json"
    if who in layers:
        return None
    return (f"{rel}:{lineno}: {layer} includes <{inc}>, a library of "
            f"{', '.join(sorted(l for l in layers if l != 'json')) or 'core/json'}"
            f"{' (and core/json.h)' if 'json' in layers else ''} only")


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
                        ms = SYSINCLUDE.match(line)
                        if ms:
                            why = check_system(rel, layer, lineno, ms.group(1))
                            if why:
                                print(why)
                                bad += 1
                            continue
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        dep = layer_of_include(inc, layer, top)
                        only = ONLY.get(layer, {}).get(dep)
                        if only is not None and inc not in only:
                            print(f"{rel}:{lineno}: {layer} includes \"{inc}\": of {dep}, "
                                  f"{layer} may include only {', '.join(sorted(only))}")
                            bad += 1
                        elif dep == "?":
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


def print_link_table():
    """For tests/tools/check_links.sh: each layer of src/ below app, bottom to
    top, with the layers it may call (what it may include, less bpf)."""
    for layer in ALLOWED:
        if layer in ("app", "tui", "bpf"):
            continue
        # a layer that sees only some headers of another (plain data) calls
        # nothing of it
        deps = [d for d in ALLOWED if d in ALLOWED[layer] and d not in ("bpf", "tui")
                and d not in ONLY.get(layer, {})]
        print(layer, *deps)


if __name__ == "__main__":
    if sys.argv[1:] == ["--link-table"]:
        print_link_table()
        sys.exit(0)
    sys.exit(main())
