//! Embeds the built console (`assets/`, from `make console`) zlib-compressed, with an ETag
//! per file, as the table `src/lib.rs` serves.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;
use std::{env, fs};

/// Served path, file under `assets/`, content type.
const FILES: [(&str, &str, &str); 3] = [
    ("/", "index.html", "text/html; charset=utf-8"),
    (
        "/console/app.js",
        "console/app.js",
        "text/javascript; charset=utf-8",
    ),
    (
        "/console/app.css",
        "console/app.css",
        "text/css; charset=utf-8",
    ),
];

fn main() {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut table = String::from("&[\n");
    for (route, file, content_type) in FILES {
        let source = Path::new("assets").join(file);
        println!("cargo::rerun-if-changed={}", source.display());
        let raw = fs::read(&source).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the console is built with `make console`)",
                source.display()
            )
        });
        let compressed = miniz_oxide::deflate::compress_to_vec_zlib(&raw, 10);
        let name = file.replace('/', "-") + ".z";
        fs::write(Path::new(&out).join(&name), &compressed).expect("OUT_DIR is writable");
        let mut hasher = DefaultHasher::new();
        hasher.write(&raw);
        table.push_str(&format!(
            "    Asset {{ route: {route:?}, content_type: {content_type:?}, etag: \"\\\"{:016x}-{:x}\\\"\", \
             raw_len: {}, zlib: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}\")) }},\n",
            hasher.finish(),
            raw.len(),
            raw.len(),
        ));
    }
    table.push(']');
    fs::write(Path::new(&out).join("assets.rs"), table).expect("OUT_DIR is writable");
}
