"""SQL helpers stored with every store, for the encodings traces use.

Kernel trace events and blktrace carry devices as the kernel's internal
dev_t, MKDEV(major, minor) = major << 20 | minor (not the user-space
encoding): block_rq_issue's dev=7340032 is 7:0.
"""

MACROS = """
CREATE MACRO dev_major(dev) AS (CAST(dev AS UBIGINT) >> 20);
CREATE MACRO dev_minor(dev) AS (CAST(dev AS UBIGINT) & 1048575);
CREATE MACRO dev_name(dev) AS (CAST(dev_major(dev) AS VARCHAR) || ':' || CAST(dev_minor(dev) AS VARCHAR));
CREATE MACRO ns_to_ms(ns) AS (ns / 1e6);
CREATE MACRO ns_to_s(ns) AS (ns / 1e9);
"""


def create(con) -> None:
    con.execute(MACROS)
