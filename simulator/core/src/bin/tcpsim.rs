fn main() {
    std::process::exit(tcpsim_core::cli::main_with_args(std::env::args_os()));
}
