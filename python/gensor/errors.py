"""Exceptions: one class per gs_status, each carrying gs_ctx_errmsg's detail.

str(e) reads as the CLI's error line does: "<status>: <detail>", the status
left out when the detail already starts with it.  e.status is the gs_status
value, e.detail the context's message.  Classes for bad input also derive
from ValueError, NoMemoryError from MemoryError, so ordinary handlers work.
"""
from . import _lib


class GensorError(Exception):
    """A gensor call returned a gs_status other than GS_OK."""

    status = None

    def __init__(self, status, detail, status_text):
        self.status, self.detail, self.status_text = status, detail, status_text
        st = status_text
        if detail.startswith(st) and detail[len(st):len(st) + 1] in (" ", ":"):
            st = ""
        super().__init__(st + (": " if st and detail else "") + detail)


class InvalidArgError(GensorError, ValueError): status = -1
class ParseError(GensorError, ValueError): status = -2
class UnknownOpError(GensorError, ValueError): status = -3
class BadShapeError(GensorError, ValueError): status = -4
class NoMemoryError(GensorError, MemoryError): status = -5
class HwUnknownError(GensorError, ValueError): status = -6
class HwInvalidError(GensorError, ValueError): status = -7
class JsonError(GensorError, ValueError): status = -8
class GensorIOError(GensorError): status = -9
class NoCandidateError(GensorError): status = -10
class NvrtcMissingError(GensorError): status = -11
class NvrtcCompileError(GensorError): status = -12
class ArchUnsupportedError(GensorError): status = -13
class OpenCLMissingError(GensorError): status = -14
class OpenCLError(GensorError): status = -15
class CudaMissingError(GensorError): status = -16
class CudaError(GensorError): status = -17
class MismatchError(GensorError): status = -18
class UnsupportedError(GensorError): status = -19
class ToolMissingError(GensorError): status = -20
class ToolError(GensorError): status = -21


BY_STATUS = {c.status: c for c in GensorError.__subclasses__()}


def check(status):
    """Raise the exception of a failed gs_status (this thread's context holds the detail)."""
    if status == 0:
        return
    L = _lib.lib()
    detail = _lib.s(L.gs_ctx_errmsg(_lib.ctx())) or ""
    cls = BY_STATUS.get(status, GensorError)
    raise cls(status, detail, _lib.s(L.gs_status_str(status)))


__all__ = ["GensorError"] + [c.__name__ for c in BY_STATUS.values()]
