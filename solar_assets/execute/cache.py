"""Generated kernel modules on disk, imported once per process and compiled by numba.

Numba's ``cache=True`` only works for functions defined in a real ``.py`` file; the file is named
by the content hash of its source (``codegen.source_digest``) and left alone while it matches
(numba keys its cache on the file's timestamp), so a second process loads the compiled code
instead of compiling again (about 0.05 s instead of 0.3-1 s per kernel).

Importing a file runs it, so only trusted files are ever imported:

* the directory is ``$SOLAR_HOME/cache/numba``, or, when that cannot be written, a private
  fallback ``$TMPDIR/solar_numba_<uid>`` created with mode 0700 and used only while it is a
  real directory owned by this user that nobody else can write (numba's ``__pycache__`` beside
  it too: its index is unpickled). Otherwise kernels compile in memory, with no disk cache, and
  one warning says why;
* every kernel file is read and hashed before it is run: a file whose bytes do not hash to the
  digest in its name (planted, edited, truncated) is rewritten from the generated source, with
  a warning, and the bytes run are the ones just checked, never re-read from disk.
"""
from __future__ import annotations

import logging
import os
import stat
import sys
import tempfile
import threading
import types
from pathlib import Path
from typing import Any

from solar_assets.execute.codegen import DECORATOR, CodegenError, KernelPlan, source_digest

logger = logging.getLogger(__name__)

_COMPILED: dict[str, Any] = {}  # digest -> numba dispatcher, for this process
_LOCK = threading.Lock()
_WARNED: set[str] = set()  # one warning per fallback situation and process
UNCACHED_DECORATOR = DECORATOR.replace("cache=True", "cache=False")


def cache_dir() -> Path:
    """``$SOLAR_HOME/cache/numba``, else ``<repo>/data/solar_home/cache/numba``."""
    home = os.environ.get("SOLAR_HOME")
    base = Path(home) if home else Path(__file__).resolve().parents[2] / "data" / "solar_home"
    return base / "cache" / "numba"


def fallback_dir() -> Path:
    """The private directory used when ``cache_dir()`` cannot be written."""
    return Path(tempfile.gettempdir()) / f"solar_numba_{os.getuid()}"


class UnsafeKernelDir(CodegenError):
    """A kernel directory that another user could write: its files are never imported."""


def private_dir(path: Path) -> Path:
    """``path`` as a directory only this user can use: created with mode 0700, or an existing
    real directory (not a symlink) owned by this user and writable by nobody else (read or
    execute bits for others are removed). Raises ``UnsafeKernelDir`` saying what is wrong."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    for d in (path, path / "__pycache__"):  # numba's index there is unpickled: it must be ours too
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafeKernelDir(f"{d} is not a directory (a symlink or a file); generated kernels are not "
                                  "imported from it")
        if st.st_uid != os.getuid():
            raise UnsafeKernelDir(f"{d} is owned by uid {st.st_uid}, not by you (uid {os.getuid()}); generated "
                                  "kernels are not imported from it")
        if st.st_mode & 0o022:
            raise UnsafeKernelDir(f"{d} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                                  "generated kernels are not imported from it")
        if st.st_mode & 0o077:
            os.chmod(d, 0o700)
    return path


def load_kernel(plan: KernelPlan) -> tuple[Any, str]:
    """The numba dispatcher for ``plan`` and where it came from: 'memory' (this process already
    imported it) or 'module' (imported now; numba compiles it, or loads its on-disk cache, on
    the first call)."""
    with _LOCK:
        if plan.digest in _COMPILED:
            return _COMPILED[plan.digest], "memory"
        name = f"solar_kernel_{plan.digest}"
        path = _kernel_file(plan)
        if path is None:  # no trusted directory: the same code, compiled in memory only
            source, filename = plan.source.replace(DECORATOR, UNCACHED_DECORATOR, 1), f"<{name}>"
        else:
            source, filename = plan.source, str(path)
        module = types.ModuleType(name)
        module.__file__ = filename
        sys.modules[name] = module
        try:
            exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - checked generated code
        except BaseException:
            del sys.modules[name]
            raise
        _COMPILED[plan.digest] = module.kernel
        return module.kernel, "module"


def _kernel_file(plan: KernelPlan) -> Path | None:
    """The checked module file for ``plan`` in the kernel cache, or in the private fallback when
    the cache cannot be written; None when neither can be used (warned once)."""
    primary = cache_dir()
    try:
        return _checked_file(primary, plan)
    except OSError as e:
        problem = f"cannot write {primary} ({e.strerror or e})"
    fallback = fallback_dir()
    try:
        path = _checked_file(private_dir(fallback), plan)
    except UnsafeKernelDir as e:
        _warn_once(f"{problem}; {e}; compiling kernels in memory without a disk cache")
        return None
    except OSError as e:
        _warn_once(f"{problem}, nor {fallback} ({e.strerror or e}); compiling kernels in memory "
                   "without a disk cache")
        return None
    _warn_once(f"{problem}; caching kernels in {fallback}")
    return path


def _checked_file(directory: Path, plan: KernelPlan) -> Path:
    """``<directory>/solar_kernel_<digest>.py`` holding exactly ``plan.source``: created when
    missing, rewritten (with a warning) when its bytes do not hash to its digest."""
    path = directory / f"solar_kernel_{plan.digest}.py"
    data = plan.source.encode()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        try:
            if source_digest(path.read_bytes()) == plan.digest:
                return path
        except OSError:
            pass  # unreadable: rewritten below
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        if st is None:
            try:
                os.link(tmp, path)  # never over a file another process has just written
            except FileExistsError:
                return _checked_file(directory, plan)  # check what that process wrote
        else:
            logger.warning("kernel module %s does not match its digest %s (planted, edited or truncated); "
                           "rewritten from the generated source", path, plan.digest)
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logger.warning("%s", message)
