/* Embeds tapeflow_printers.py in libtapeflow.so, so that gdb loads the pretty-printers with
   the library (once its folder is an auto-load safe path; README "Debugging with gdb").
   One .debug_gdb_scripts entry of type 4 (an inline Python script): the byte 4, the script's
   name on its own line, the script's text, a NUL. The section holds mergeable strings, so the
   linker keeps one copy of an entry however many objects carry it.
   TAPEFLOW_GDB_PRINTERS is the .py file's path (a quoted string, set by CMakeLists.txt). */
#ifndef TAPEFLOW_GDB_PRINTERS
#error "TAPEFLOW_GDB_PRINTERS (the printers' .py path) is not defined"
#endif
        .pushsection ".debug_gdb_scripts", "MS",@progbits,1
        .byte 4
        .ascii "tapeflow_printers.py\n"
        .incbin TAPEFLOW_GDB_PRINTERS
        .byte 0
        .popsection
/* No code here: say so, or the linker would mark the library's stack executable. */
        .section .note.GNU-stack,"",@progbits
