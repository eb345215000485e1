#![no_main]
// See advisor_parsers::fuzzing::event_format for what the input is.
libfuzzer_sys::fuzz_target!(|data: &[u8]| advisor_parsers::fuzzing::event_format(data));
