#!/usr/bin/env bash
# Here (MLIR): links mx-convert statically for the GPU machine, which has no
# MLIR or LLVM libraries (build/bin/mx-convert loads libMLIR.so.22.1 and
# libLLVM.so.22.1, about 240 MB, more than a device call carries). The
# objects and archives are the build's own; only the link differs: every
# MLIR and LLVM archive in one group instead of the shared libraries,
# libstdc++ and libgcc static. The result needs only glibc (2.36 or newer),
# libz and libzstd. Stripped and compressed (xz) to fit a call's carry.
#   bench/gpu/make-static-mx-convert.sh   -> bench/gpu/mx-convert-static/
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/gpu/mx-convert-static
mkdir -p "$out"
flock /tmp/microscale-build.lock ninja -C build mx-convert > /dev/null
ninja -C build -t commands mx-convert | tail -1 > "$out/link.sh"
python3 - "$out/link.sh" "$PWD/$out/mx-convert.full" <<'PY'
import re, sys
path, target = sys.argv[1], sys.argv[2]
s = open(path).read().strip()
s = s.removeprefix(": &&").removesuffix("&& :").strip()
s = s.replace("-o bin/mx-convert", "-o " + target)
s = re.sub(r'-Wl,-rpath,"[^"]*"', "", s)
# The shared libraries out; every archive in one group (the order the build
# gives assumes the shared ones resolve the rest).
s = re.sub(r"\S*/libMLIR\.so\S*|\S*/libLLVM\.so\S*|\S*/libz3\.so\S*", "", s)
first = re.search(r"\S+\.a\b", s).group(0)
s = s.replace(first, "-Wl,--start-group " + first, 1)
s += (" /usr/lib/llvm-22/lib/libMLIR*.a /usr/lib/llvm-22/lib/libLLVM*.a"
      " -Wl,--end-group -static-libstdc++ -static-libgcc -lpthread -ldl")
open(path, "w").write("cd build && " + s + "\n")
PY
bash "$out/link.sh"
strip -o "$out/mx-convert" "$out/mx-convert.full"
rm "$out/mx-convert.full"
# Checked here before it travels.
"$out/mx-convert" --help > /dev/null
echo "needs: $(objdump -p "$out/mx-convert" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')"
xz -T2 -1 -f "$out/mx-convert"
ls -l "$out/mx-convert.xz"
