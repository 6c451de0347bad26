/* probe_check.h - "CHECK <name> <0|1>" lines in the line protocol, for the library test
 * probes. Include after dnn64_platform.h. */
#ifndef PROBE_CHECK_H
#define PROBE_CHECK_H

static void check(const char *name, int ok)
{
    dnn64_line line;
    dnn64_line_begin(&line, "CHECK ");
    dnn64_line_str(&line, name);
    dnn64_line_i32(&line, ok);
    dnn64_line_end(&line);
}

#endif
