"""The one thing pyproject.toml cannot say: WheelTimer's staging core in C (optimized/_apphot.c).

It is optional: without a C compiler the build goes on and WheelTimer runs its Python twin
(wheelspec.optimized.app_stage.PyStage), slower per operation, the same semantics.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("wheelspec.optimized._apphot", ["optimized/_apphot.c"],
                             extra_compile_args=["-O2"], optional=True)])
