# lit configuration for qct's FileCheck tests (diagnostics, dialect, passes, emission).
import os

import lit.formats

config.name = "qct"
config.test_format = lit.formats.ShTest()  # the internal shell: LLVM 23+ lit drops the external one
config.suffixes = [".mlir", ".json", ".jsonc", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qct_obj_root, "tests", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.qct_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%qct_src", config.qct_src_root))
config.substitutions.append(("%specs", os.path.join(config.qct_src_root, "specs")))
# The version the compiler stamps into what it emits (one source: the VERSION file).
config.substitutions.append(("%qct_version", config.qct_version))
