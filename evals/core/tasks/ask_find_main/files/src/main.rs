fn main() {
    app::run();
}
