"""Build the Cython dynamic-programming core (cython_ext/*.pyx) into spacy_punctgen."""
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
extensions = [
    Extension(
        f"spacy_punctgen.inference._{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for pyx in sorted((HERE / "cython_ext").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        include_path=[str(HERE / "cython_ext")],  # dp.pyx cimports its types from dp.pxd
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
