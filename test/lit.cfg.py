# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MICROSCALE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.microscale_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "microscale-capi-test.c"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%microscale_src_root", config.microscale_src_root))
config.substitutions.append(("%microscale_obj_root", config.microscale_obj_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%microscale_libs",
                             os.path.join(config.microscale_obj_root, "lib")))
# Upstream's own mlir-opt (Debian's, linked against libMLIR.so), for the
# plugin tests. In an AddressSanitizer build (MICROSCALE_SANITIZE) the
# plugins need the sanitizer's runtime, which Debian's mlir-opt lacks: it is
# preloaded (its leaks are upstream's, not ours; allow_user_poisoning=0 as
# scripts/run-sanitized-tests.sh says why).
upstream_mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
if "address" in config.microscale_sanitize.split(";"):
    import subprocess
    asan_runtime = subprocess.run(
        [config.microscale_cxx_compiler,
         "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True).stdout.strip()
    upstream_mlir_opt = (
        "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 %s"
        % (asan_runtime, upstream_mlir_opt))
if config.microscale_sanitize:
    config.available_features.add("sanitizer")
config.substitutions.append(("%upstream_mlir_opt", upstream_mlir_opt))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not, count and split-file live in the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# Our tools, for the helper scripts that tests run.
llvm_config.with_environment("PATH", config.microscale_tools_dir, append_path=True)

tool_dirs = [config.microscale_tools_dir, config.llvm_tools_dir]
tools = ["mx-opt", "mx-convert", "mx-numerics", "microscale-capi-test"]

# Triton's byte vectors live beside the checkout (shared/vectors), never in
# the repository; the tests that read them need the folder to exist.
triton_vectors = os.path.join(config.microscale_src_root, "..", "shared",
                              "vectors", "triton-layouts")
if os.path.isfile(os.path.join(triton_vectors, "manifest.json")):
    config.available_features.add("triton-vectors")
    config.substitutions.append(("%triton_vectors", triton_vectors))
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas (CUDA) assembles the generated PTX where it is installed.
import shutil
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(
        ("%cuda_toolkit", os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))))

# mlir-runner and its support libraries, for the CPU execution tests.
config.substitutions.append(("%mlir_runner",
                             os.path.join(config.llvm_tools_dir, "mlir-runner")))
llvm_lib = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%c_runner_utils",
                             os.path.join(llvm_lib, "libmlir_c_runner_utils.so")))
config.substitutions.append(("%runner_utils",
                             os.path.join(llvm_lib, "libmlir_runner_utils.so")))

# A machine with the CUDA driver runs the GPU benchmarks for real instead.
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
