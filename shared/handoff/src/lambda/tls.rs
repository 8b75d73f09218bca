//! DynamoDB's HTTPS client, and the `AWS_CA_BUNDLE` it trusts besides the platform's roots.

/// The SDK's HTTPS client: rustls on ring, the same crypto provider as the A2A client, so one
/// TLS stack is linked. It trusts the platform's root certificates and, when `AWS_CA_BUNDLE`
/// names a PEM file, that file's certificates too. Root certificates load when the SDK first
/// uses the client (the Init warm-up), not here; the bundle is read and checked here.
pub(super) fn https_client(
    env: impl Fn(&str) -> Option<String>,
    read: impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<aws_sdk_dynamodb::config::SharedHttpClient, String> {
    use aws_smithy_http_client::tls;
    let builder = aws_smithy_http_client::Builder::new().tls_provider(tls::Provider::Rustls(
        tls::rustls_provider::CryptoMode::Ring,
    ));
    let Some(path) = env("AWS_CA_BUNDLE").filter(|path| !path.is_empty()) else {
        return Ok(builder.build_https());
    };
    let pem = read(&path)
        .map_err(|error| format!("AWS_CA_BUNDLE={path}: the CA bundle cannot be read ({error})"))?;
    check_ca_bundle(&pem).map_err(|error| format!("AWS_CA_BUNDLE={path}: {error}"))?;
    let trust = tls::TrustStore::default()
        .with_native_roots(true)
        .with_pem_certificate(pem);
    let context = tls::TlsContext::builder()
        .with_trust_store(trust)
        .build()
        .map_err(|error| format!("AWS_CA_BUNDLE={path}: {error}"))?;
    Ok(builder.tls_context(context).build_https())
}

/// Checks a PEM bundle the way the SDK's rustls connector reads it when it first connects
/// (where a section it cannot parse is a panic): every `CERTIFICATE` section must decode and
/// be a usable trust anchor, and there must be at least one.
fn check_ca_bundle(pem: &[u8]) -> Result<usize, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for (n, cert) in CertificateDer::pem_slice_iter(pem).enumerate() {
        let cert =
            cert.map_err(|error| format!("certificate {} is not valid PEM: {error}", n + 1))?;
        roots
            .add(cert)
            .map_err(|error| format!("certificate {} cannot be parsed: {error}", n + 1))?;
    }
    match roots.len() {
        0 => Err("the file holds no PEM certificate".to_owned()),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lambda::test_env as env;

    /// A self-signed CA certificate (EC P-256; its key was thrown away).
    const TEST_CA: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBlDCCATugAwIBAgIUab0LwxFooho+eGJdFWBUxUdh46AwCgYIKoZIzj0EAwIw\n\
HzEdMBsGA1UEAwwUaGFuZG9mZiB1bml0LXRlc3QgQ0EwIBcNMjYxMjA1MTI0NDIz\n\
WhgPMjEyNjExMTExMjQ0MjNaMB8xHTAbBgNVBAMMFGhhbmRvZmYgdW5pdC10ZXN0\n\
IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXM8IRUken0JFltDE2OSSAOcW\n\
ffPsiwbY4FHzyHb+XvBjGk4sdFbv4rlhcpRZqToTS68IC2NG0LpFODjtU4jMOqNT\n\
MFEwHQYDVR0OBBYEFN0Ulo7wyyKyIhFBvkHgx9vrsFRNMB8GA1UdIwQYMBaAFN0U\n\
lo7wyyKyIhFBvkHgx9vrsFRNMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID\n\
RwAwRAIgL9NxhwpScYu0oJdb3U5PCYesHI35keRR7LvwF2ujiSsCIGoj23V3Q1sG\n\
Uev2DmSha6K2B/orvzrPRPSJXEsPxQ3g\n\
-----END CERTIFICATE-----\n\
";

    #[test]
    fn aws_ca_bundle_is_read_and_checked_before_the_function_starts() {
        let read = |contents: &'static str| {
            move |path: &str| match path {
                "/bundle.pem" => Ok(contents.as_bytes().to_vec()),
                _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            }
        };
        // Unset or empty: the platform's roots only, nothing read.
        assert!(https_client(env(&[]), read("")).is_ok());
        assert!(https_client(env(&[("AWS_CA_BUNDLE", "")]), read("")).is_ok());
        let bundle = [("AWS_CA_BUNDLE", "/bundle.pem")];
        assert!(https_client(env(&bundle), read(TEST_CA)).is_ok());
        let two = format!("# a comment\n{TEST_CA}\n{TEST_CA}");
        assert_eq!(
            check_ca_bundle(two.as_bytes()),
            Ok(2),
            "comments between sections"
        );

        let missing = [("AWS_CA_BUNDLE", "/nowhere.pem")];
        let err = https_client(env(&missing), read(TEST_CA)).unwrap_err();
        assert!(err.starts_with("AWS_CA_BUNDLE=/nowhere.pem: "), "{err}");
        assert!(err.contains("cannot be read"), "{err}");
        for bad in [
            "",
            "not a certificate",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\nMIIB\n",
        ] {
            let err = https_client(env(&bundle), read(bad)).unwrap_err();
            assert!(
                err.starts_with("AWS_CA_BUNDLE=/bundle.pem: "),
                "{bad:?}: {err}"
            );
        }
    }
}
