#![no_main]
// See advisor_parsers::fuzzing::blktrace for what the input is.
libfuzzer_sys::fuzz_target!(|data: &[u8]| advisor_parsers::fuzzing::blktrace(data));
