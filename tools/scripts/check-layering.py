#!/usr/bin/env python3
"""Checks the library layering of docs/design.md ("Layering") on the source
tree: the target-neutral libraries (Reference, the dialect's IR, Utils and
Transforms) neither include nor link a target dialect, and each target's
conversion library includes no other target's.

  check-layering.py SOURCE_ROOT

Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

# Headers and libraries of the target dialects, and the target-specific
# strings (x86 intrinsics, NVVM/ROCDL op prefixes) a neutral file must not use.
TARGET_INCLUDES = re.compile(
    r'#include\s+"(mlir/Dialect/(LLVMIR|NVVM|ROCDL|AMDGPU|GPU|X86Vector|NVGPU)/'
    r'|mlir/Conversion/|mlir/Target/|microscale/Conversion/)')
TARGET_LIBRARIES = re.compile(
    r'\bMLIR(LLVMDialect|NVVMDialect|ROCDLDialect|AMDGPUDialect|GPUDialect|'
    r'X86VectorDialect|NVGPUDialect)\b|\bMLIR\w*To(LLVM|NVVM|ROCDL)\w*\b')
TARGET_CODE = re.compile(r'\b(LLVM|NVVM|ROCDL|amdgpu|gpu)::|llvm\.x86\.')

NEUTRAL = ["include/microscale/Reference", "lib/Reference",
           "include/microscale/Dialect", "lib/Dialect"]
# Each target's library and the other targets' headers it must not include.
TARGETS = {
    "CPU": ("NVVM", "ROCDL", "GPUCommon"),
    "NVVM": ("CPU", "ROCDL"),
    "ROCDL": ("CPU", "NVVM"),
    "GPUCommon": ("CPU", "NVVM", "ROCDL"),
}


def files(root, sub):
    for dirpath, _, names in os.walk(os.path.join(root, sub)):
        for name in sorted(names):
            yield os.path.join(dirpath, name)


def main():
    root = sys.argv[1]
    problems = []
    for sub in NEUTRAL:
        for path in files(root, sub):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if path.endswith("CMakeLists.txt"):
                for m in TARGET_LIBRARIES.finditer(text):
                    problems.append("%s: links the target library %s"
                                    % (rel, m.group(0)))
                continue
            if not path.endswith((".h", ".cpp", ".td")):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if TARGET_INCLUDES.search(line):
                    problems.append("%s:%d: includes a target header: %s"
                                    % (rel, n, line.strip()))
                code = line.split("//", 1)[0]
                if TARGET_CODE.search(code):
                    problems.append("%s:%d: target-specific code: %s"
                                    % (rel, n, line.strip()))
    for target, others in TARGETS.items():
        for sub in ("include/microscale/Conversion/" + target,
                    "lib/Conversion/" + target):
            for path in files(root, sub):
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        for other in others:
                            if ('#include "microscale/Conversion/%s/' % other
                                    in line):
                                problems.append(
                                    "%s:%d: the %s target includes %s: %s"
                                    % (rel, n, target, other, line.strip()))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
