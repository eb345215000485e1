#![no_main]
// See advisor_parsers::fuzzing::blkparse_text for what the input is.
libfuzzer_sys::fuzz_target!(|data: &[u8]| advisor_parsers::fuzzing::blkparse_text(data));
