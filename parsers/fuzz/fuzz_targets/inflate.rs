#![no_main]
// See advisor_parsers::fuzzing::inflate for what the input is.
libfuzzer_sys::fuzz_target!(|data: &[u8]| advisor_parsers::fuzzing::inflate(data));
