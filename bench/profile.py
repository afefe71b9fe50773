#!/usr/bin/env python3
"""Where a transaction's CPU goes: `perf script` of the harness (demangled by `swift demangle`), on standard input.

Each sample is put down twice:
- to the harness code that spent it: the innermost frame of the harness's own code on its stack, named by module and
  type (Net.ServerConnection, EMV3DS.FieldTable, ...), so that OpenSSL, libc, the kernel and the Swift runtime count
  where the harness called them; a sample with no harness frame counts under its thread's library;
- to what ran at its leaf: the kernel, OpenSSL, SQLite, malloc and free, retain and release, the rest of the Swift
  runtime and libc, libuv, or the harness's own code.

Usage: profile.py US_PER_TRANSACTION [ROWS] < perf-script-output
prints each row's share of the samples and its microseconds per transaction (the share of the harness process's CPU
per transaction measured over the same window), split by leaf, then the totals by thread and by leaf.
"""
import re
import sys
from collections import Counter, defaultdict

MODULES = ("AccessControlServer DirectoryServer EMV3DS EMVCrypto Faults Harness HarnessCLI JOSE JSON Journal "
           "Messaging Net Runs SDKSimulator Scenarios Store ThreeDSServer").split()
MODULE = re.compile(r"(?<![\w.])(" + "|".join(MODULES) + r")\.([A-Za-z_][\w]*)")
# An extension names the module that wrote it, then the extended type's path and the member: Swift.Array.scheme(for:).
EXTENSION = re.compile(r"\(extension in (" + "|".join(MODULES) + r")\):((?:\w+\.)+)")
# The cryptography's own code is one row: what the targets call "crypto" is all of it.
CRYPTO_MODULES = {"JOSE", "EMVCrypto"}

LEAF_KINDS = [  # (kind, test on the leaf's symbol and library), first match wins
    ("kernel", lambda sym, dso: "kernel.kallsyms" in dso or sym.startswith("entry_SYSCALL")),
    ("OpenSSL", lambda sym, dso: "libcrypto" in dso or "libssl" in dso),
    ("SQLite", lambda sym, dso: "libsqlite3" in dso),
    ("retain/release", lambda sym, dso: re.match(r"(swift_(unknownObject|nonatomic_|bridgeObject)?(retain|release|Retain|Release)(_n)?|"
                                                 r"swift_(isUniquelyReferenced\w*|tryRetain)|_?swift_(retain|release)_\w*)$", sym) is not None),
    ("malloc/free", lambda sym, dso: re.match(r"(swift_(allocObject|deallocObject|slowAlloc|slowDealloc|deallocClassInstance|"
                                              r"allocBox|deallocBox)|_?_?libc_(malloc|calloc|realloc|free)|malloc|calloc|free|cfree|"
                                              r"_int_malloc|_int_free\w*|malloc_consolidate|realloc|_int_realloc|"
                                              r"unlink_chunk\w*|tcache\w*|aligned_alloc|posix_memalign|_mid_memalign|__GI___libc_\w*alloc|"
                                              r"__GI___libc_free)(@\S+)?$", sym) is not None),
    ("libuv", lambda sym, dso: "libuv" in dso),
    ("Swift runtime", lambda sym, dso: "libswift" in dso or "libFoundation" in dso or "libdispatch" in dso or "lib_Foundation" in dso),
    ("libc", lambda sym, dso: "libc.so" in dso or "libm.so" in dso or "ld-linux" in dso),
    ("http_parser", lambda sym, dso: "libhttp_parser" in dso),
    ("harness code", lambda sym, dso: "threeds-harness" in dso),
    ("other", lambda sym, dso: True),  # the vDSO's clock, libgcc's unwinder, an address perf could not name
]
KINDS = [kind for kind, _ in LEAF_KINDS]


def strip_brackets(name, opening, closing):
    """The name without what stands between `opening` and `closing` (nested), the arrow of a function type (->) aside."""
    out, depth = [], 0
    for index, ch in enumerate(name):
        if ch == opening:
            depth += 1
        elif ch == closing and depth and not (closing == ">" and index and name[index - 1] == "-"):
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def strip_generics(name):
    """The name without its <...> arguments, whose types would otherwise name the wrong module."""
    return strip_brackets(name, "<", ">")


def harness_row(sym):
    """Module.Type of a harness frame, or None when the frame is not the harness's own code."""
    name = strip_generics(sym)
    extension = EXTENSION.search(name)
    if extension:
        module, kind = extension.group(1), extension.group(2).rstrip(".").split(".")[-1] + " (extension)"
    else:
        # A closure's or a witness's own types come first (closure #1 (Net.HTTPRequest) -> ... in ThreeDSServer.init;
        # protocol witness for Store.TransactionArchive.save in conformance Store.SQLiteArchive): the code is the
        # context after the last " in ", once the parameter lists are gone.
        name = strip_brackets(name, "(", ")")
        name = name.split(" in conformance ")[1] if " in conformance " in name else name.split(" in ")[-1]
        match = MODULE.search(name)
        if not match:
            return None
        module, kind = match.group(1), match.group(2)
    if module in CRYPTO_MODULES:
        return "crypto (JOSE, EMVCrypto and OpenSSL under them)"
    return f"{module}.{kind}"


def samples(lines):
    comm, frames = None, []
    for line in lines:
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line.startswith(("\t", " ")):
            comm = line.split()[0]
            frames = []
        else:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)\s*$", line)
            if m:
                frames.append((m.group(1), m.group(2)))
    if comm is not None:
        yield comm, frames


def main():
    per_transaction = float(sys.argv[1])
    rows_shown = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rows = defaultdict(Counter)
    threads = Counter()
    total = 0
    for comm, frames in samples(sys.stdin):
        if not frames:
            continue
        total += 1
        thread = "store-writer" if comm == "store-writer" else ("loops" if comm.startswith("uv-loop") else comm)
        threads[thread] += 1
        leaf_sym, leaf_dso = frames[0]
        kind = next(k for k, test in LEAF_KINDS if test(leaf_sym, leaf_dso))
        row = None
        for sym, dso in frames:
            if "threeds-harness" in dso:
                row = harness_row(sym)
                if row:
                    break
        if row is None:
            row = f"no harness frame ({kind})"
        if thread != "loops":
            row = f"[{thread}] {row}"
        rows[row][kind] += 1
    if not total:
        sys.exit("no samples")

    def us(n):
        return per_transaction * n / total

    width = max(len(r) for r in rows) if rows else 10
    width = min(width, 60)
    print(f"{total} samples; {per_transaction:.1f} us of the harness's CPU per transaction; 1 % = {per_transaction / 100:.1f} us")
    print()
    shown_kinds = [k for k in KINDS if any(rows[r][k] for r in rows)]
    header = f"{'where (innermost harness frame)':<{width}} {'share':>6} {'us/tx':>7} | " + " ".join(f"{k[:10]:>10}" for k in shown_kinds)
    print(header)
    print("-" * len(header))
    ordered = sorted(rows.items(), key=lambda item: -sum(item[1].values()))
    rest = Counter()
    for i, (row, kinds) in enumerate(ordered):
        n = sum(kinds.values())
        if i >= rows_shown:
            rest.update(kinds)
            continue
        print(f"{row[:width]:<{width}} {100 * n / total:5.1f}% {us(n):7.1f} | " + " ".join(f"{us(kinds[k]):10.1f}" for k in shown_kinds))
    if rest:
        n = sum(rest.values())
        print(f"{'(the other ' + str(len(ordered) - rows_shown) + ' rows)':<{width}} {100 * n / total:5.1f}% {us(n):7.1f} | "
              + " ".join(f"{us(rest[k]):10.1f}" for k in shown_kinds))
    print()
    by_kind = Counter()
    for kinds in rows.values():
        by_kind.update(kinds)
    print("by leaf:   " + ", ".join(f"{k} {100 * by_kind[k] / total:.1f} % ({us(by_kind[k]):.1f} us)" for k in shown_kinds))
    print("by thread: " + ", ".join(f"{t} {100 * n / total:.1f} % ({us(n):.1f} us)" for t, n in threads.most_common()))
    by_module = Counter()
    for row, kinds in rows.items():
        name = row.split("] ")[-1]
        module = name.split(".")[0] if "." in name and not name.startswith(("crypto", "no harness")) else name
        if row.startswith("[store-writer]"):
            module = "store-writer thread"
        by_module[module] += sum(kinds.values())
    print("by module: " + ", ".join(f"{m} {100 * n / total:.1f} % ({us(n):.1f} us)" for m, n in by_module.most_common()))


if __name__ == "__main__":
    main()
