//! TLS configurations, built on the I/O pool (they read files): a client's
//! trusted roots (the system's store, loaded once, or a CA PEM file) and a
//! server's certificate chain and key (PEM files).

use rustls::crypto::ring::default_provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::sync::{Arc, OnceLock};

/// A client configuration trusting the CA certificates in the PEM file `ca`,
/// or (None) the system's roots.
pub fn client_config(ca: Option<&str>) -> Result<Arc<ClientConfig>, String> {
    // Shared by every isolate: read-only once made.
    static SYSTEM: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    match ca {
        None => SYSTEM.get_or_init(|| client_with(system_roots()?)).clone(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in certs(path)? {
                roots.add(cert).map_err(|e| format!("cannot use the CA certificate in {path}: {e}"))?;
            }
            client_with(roots)
        }
    }
}

fn client_with(roots: RootCertStore) -> Result<Arc<ClientConfig>, String> {
    let config = ClientConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The system's trusted roots (what OpenSSL would use: SSL_CERT_FILE,
/// SSL_CERT_DIR, /etc/ssl/certs). Certificates that do not parse are skipped.
fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found.errors.first().map_or_else(|| "none found".to_string(), |e| e.to_string());
        return Err(format!(
            "cannot load the system's root certificates ({why}); install them (ca-certificates) or give tls.ca"
        ));
    }
    Ok(roots)
}

/// A server configuration with the certificate chain in `cert` and the
/// private key in `key` (PEM files).
pub fn server_config(cert: &str, key: &str) -> Result<Arc<ServerConfig>, String> {
    let chain = certs(cert)?;
    let text = read(key)?;
    let key_der = PrivateKeyDer::from_pem_slice(&text).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => format!("{key} has no private key (PEM \"PRIVATE KEY\")"),
        e => format!("cannot read the key in {key}: {e}"),
    })?;
    let config = ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| format!("cannot use the certificate {cert} with the key {key}: {e}"))?;
    Ok(Arc::new(config))
}

fn read(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {path}: {}", crate::os::io_reason(&e)))
}

/// The certificates in a PEM file (at least one).
fn certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read the certificates in {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{path} has no certificate (PEM \"CERTIFICATE\")"));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_name_their_path() {
        let dir = std::env::temp_dir().join(format!("csp_tls_cfg_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a pem file\n").unwrap();
        let junk = junk.to_str().unwrap();
        let e = client_config(Some(junk)).unwrap_err();
        assert_eq!(e, format!("{junk} has no certificate (PEM \"CERTIFICATE\")"));
        let e = client_config(Some("/nonexistent/ca.pem")).unwrap_err();
        assert_eq!(e, "cannot read /nonexistent/ca.pem: No such file or directory");
        let e = server_config("/nonexistent/cert.pem", junk).unwrap_err();
        assert!(e.starts_with("cannot read /nonexistent/cert.pem"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
