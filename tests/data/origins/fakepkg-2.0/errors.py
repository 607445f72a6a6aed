CUDA_MISMATCH_MESSAGE = """
The detected CUDA version ({0}) mismatches the version that was used to compile
PyTorch ({1}). Please make sure to use the same CUDA versions.
"""


class ChildFailedError(Exception):
    def __init__(self, name, failures):
        self.name = name
        super().__init__(self.format_msg())


def check_cuda_version(found, built):
    if found != built:
        raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(found, built))
