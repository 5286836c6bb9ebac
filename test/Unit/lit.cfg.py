# -*- Python -*-
# Runs the GoogleTest unit tests as part of the lit suite, one lit test per
# GoogleTest case.
import os

import lit.formats

config.name = "MICROSCALE-Unit"
config.suffixes = []
config.test_exec_root = config.microscale_unittests_dir
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
