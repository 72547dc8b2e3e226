#!/usr/bin/env python3
"""Runs tapeflow-repl on a pseudo-terminal, as a person types at it (a ctest test).

    python3 repl_pty.py TAPEFLOW_REPL

On a terminal the REPL reads through LLVM's LineEditor (libedit): history and line editing,
which the transcript tests fed on a pipe never reach. This types a few lines, recalls one
with the up arrow (ESC [ A) and edits it, moves the cursor with the left arrow (ESC [ D) to
insert a character, leaves with Ctrl-D, and checks what the REPL printed and the history
file it saved (HOME is a fresh temporary folder). Exits 77 (ctest SKIP_RETURN_CODE) with a
message when tapeflow-repl was not built or the platform has no pty module.
"""
import os
import re
import select
import termios
import sys
import tempfile
import time

try:
    import pty
except ImportError:  # not a POSIX platform
    print("SKIP: python3 has no pty module here")
    sys.exit(77)

STEP_TIMEOUT_S = 120  # the first input loads libtapeflow and the prelude (a few seconds)
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")


def main():
    repl = sys.argv[1] if len(sys.argv) > 1 else ""
    if not repl or not os.access(repl, os.X_OK):
        print("SKIP: tapeflow-repl is not built (apt-get install libclang-22-dev libclang-cpp22-dev "
              "llvm-22-dev, then reconfigure)")
        return 77
    home = tempfile.mkdtemp(prefix="tapeflow_repl_pty_")
    env = dict(os.environ, HOME=home, TERM="xterm", COLUMNS="200", LINES="50")
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(repl, [repl], env)
    transcript = bytearray()

    def read_until(pattern, what):
        """Reads the REPL's output until `pattern` (bytes, a regex) matches what came after the
        last call; fails the test after STEP_TIMEOUT_S."""
        start = len(transcript)
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while time.monotonic() < deadline:
            if re.search(pattern, ANSI.sub(b"", bytes(transcript[start:]))):
                return
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                transcript.extend(chunk)
        fail("timed out waiting for " + what)

    def fail(message):
        text = ANSI.sub(b"", bytes(transcript)).decode("utf-8", "replace")
        print("---- transcript (escape sequences removed) ----\n" + text + "\n----")
        print("FAIL: " + message)
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        sys.exit(1)

    def send(keys):
        # Note [Raw mode before keys]: libedit puts the terminal in raw mode when it starts reading
        # a line, and switching modes may flush input typed before that (a Ctrl-D sent right after
        # the prompt was lost under load, and the REPL never left). Wait until the terminal is out
        # of canonical mode, as a person's typing always is, then type.
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while termios.tcgetattr(fd)[3] & termios.ICANON:
            if time.monotonic() > deadline:
                fail("the terminal never left canonical mode (libedit not reading)")
            time.sleep(0.02)
        os.write(fd, keys)

    prompt = rb"tapeflow> "
    read_until(prompt, "the first prompt")
    send(b"Tensor t = {1.f, 2.f};\r")
    read_until(prompt, "the prompt after a declaration")
    send(b"t * 2\r")
    read_until(rb"tapeflow\.Tensor\(\[2\. 4\.\], shape=\(2,\), dtype=float32\)[\s\S]*" + prompt,
               "the value of t * 2")
    # History: the up arrow recalls "t * 2"; typing appends to it.
    send(b"\x1b[A")
    time.sleep(0.3)
    send(b" + 1\r")
    read_until(rb"tapeflow\.Tensor\(\[3\. 5\.\], shape=\(2,\), dtype=float32\)[\s\S]*" + prompt,
               "the value of the recalled and edited line 't * 2 + 1'")
    # Line editing: "t * 7", the cursor one left (before the 7), insert "1": "t * 17".
    send(b"t * 7")
    time.sleep(0.2)
    send(b"\x1b[D")
    time.sleep(0.2)
    send(b"1\r")
    read_until(rb"tapeflow\.Tensor\(\[17\. 34\.\], shape=\(2,\), dtype=float32\)[\s\S]*" + prompt,
               "the value of the edited line 't * 17'")
    # An error at the terminal: the session goes on.
    send(b"t + Tensor{1.f, 2.f, 3.f}\r")
    read_until(rb"InvalidArgumentError: \[add\][\s\S]*" + prompt, "the error of a bad add")
    send(b"\x04")  # Ctrl-D at an empty prompt leaves
    deadline = time.monotonic() + STEP_TIMEOUT_S
    status = None
    while time.monotonic() < deadline:
        # select first: a read of a terminal the REPL still holds open would block past the deadline.
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
                if chunk:
                    transcript.extend(chunk)
                    continue
            except OSError:
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    if status is None:
        fail("tapeflow-repl did not leave after Ctrl-D")
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        fail("tapeflow-repl ended with status %r" % status)
    history_file = os.path.join(home, ".tapeflow_repl_history")
    if not os.path.exists(history_file):
        fail("no history file was saved at " + history_file)
    with open(history_file, "rb") as f:
        history = f.read()
    # libedit's file format escapes spaces as \040.
    history = history.replace(b"\\040", b" ")
    for line in (b"Tensor t = {1.f, 2.f};", b"t * 2", b"t * 2 + 1", b"t * 17"):
        if line not in history:
            fail("the history file lacks %r: %r" % (line, history))
    print("line editing, history recall and the history file: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
