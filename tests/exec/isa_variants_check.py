#!/usr/bin/env python3
"""ctest's `isa_variants`: every source file whose code depends on the target's ISA macros
(__AVX512*, __AVX2__, __AVX__) compiles, warnings as errors, for both x86-64 kinds netspec runs
on, whatever the build machine is: x86-64-v3 (AVX2 only: AMD EPYC Zen 1-3) and x86-64-v4
(AVX-512: Intel, AMD Zen 4). With -march=native only the build machine's kind is compiled, so an
AVX-512 host never saw an AVX2-only break (session 24: an unused helper left by compiled-out
AVX-512 forms failed -Werror on the first AVX2-only host). -O0: the unused-function check runs
in a full compile (-fsyntax-only skips it), and -O0 is the cheapest full compile.
    isa_variants_check.py BUILD_DIR SOURCE_DIR
"""
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

ISA_MACRO = re.compile(r"__AVX512[A-Z]*__|__AVX2__|__AVX__")
KINDS = ("x86-64-v3", "x86-64-v4")


def main() -> int:
    build, src = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
    commands = json.loads((build / "compile_commands.json").read_text())
    checked, failures = 0, []
    for entry in commands:
        path = Path(entry["file"]).resolve()
        if src / "src" not in path.parents or not ISA_MACRO.search(path.read_text()):
            continue
        argv = shlex.split(entry["command"])
        if any(a.startswith("-mavx") for a in argv):
            continue  # the file pins its own ISA (vmath_avx2.cpp, winograd_avx2.cpp, ...)
        # Drop the launcher (ccache), the output, the dependency file flags and any -march=.
        while argv and Path(argv[0]).name == "ccache":
            argv.pop(0)
        out, skip = [], False
        for a in argv:
            if skip:
                skip = False
            elif a in ("-o", "-MF", "-MT"):
                skip = True
            elif a != "-MD" and not a.startswith("-march="):
                out.append(a)
        for kind in KINDS:
            cmd = out + [f"-march={kind}", "-O0", "-o", "/dev/null"]
            r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
            checked += 1
            if r.returncode != 0:
                failures.append(f"{path.relative_to(src)} with -march={kind}:\n{r.stderr[-3000:]}")
    for f in failures:
        print(f"FAILED {f}")
    if checked == 0:
        print("no source file uses an ISA macro: the check found nothing to compile")
        return 1
    print(f"isa_variants: {checked - len(failures)} of {checked} compiles passed "
          f"({', '.join(KINDS)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
