pub struct Config {
    pub name: String,
    pub port: u16,
}
