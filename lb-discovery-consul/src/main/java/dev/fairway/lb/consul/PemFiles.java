package dev.fairway.lb.consul;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.jspecify.annotations.Nullable;

/**
 * Reads the PEM files the Consul settings name, with BouncyCastle's {@link PEMParser}: certificates,
 * and unencrypted private keys in every form Consul's tools and OpenSSL write: PKCS#8
 * ({@code BEGIN PRIVATE KEY}), PKCS#1 RSA ({@code BEGIN RSA PRIVATE KEY}) and SEC1 EC
 * ({@code BEGIN EC PRIVATE KEY}, what {@code consul tls cert create} writes). Every failure is an
 * {@link IllegalArgumentException} naming the option and the path. The JCA provider of the JDK does
 * the key conversion; BouncyCastle's provider is never installed.
 */
final class PemFiles {
  private PemFiles() {}

  /** Every certificate in {@code file}; fails if there is none. */
  static List<X509Certificate> certificates(String field, Path file) {
    List<X509Certificate> certs = certificatesOrEmpty(field, file);
    if (certs.isEmpty()) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: a PEM file with a certificate)");
    }
    return certs;
  }

  /** Every certificate in {@code file}, possibly none (other PEM objects are passed over). */
  static List<X509Certificate> certificatesOrEmpty(String field, Path file) {
    List<X509Certificate> out = new ArrayList<>();
    JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser pem = new PEMParser(in)) {
      for (Object o = pem.readObject(); o != null; o = pem.readObject()) {
        if (o instanceof X509CertificateHolder holder) {
          out.add(converter.getCertificate(holder));
        }
      }
    } catch (IOException | CertificateException | RuntimeException e) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: a readable PEM certificate file)", e);
    }
    return out;
  }

  /** The one unencrypted private key in {@code file}. */
  static PrivateKey privateKey(String field, Path file) {
    Object key = null;
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser pem = new PEMParser(in)) {
      for (Object o = pem.readObject(); o != null && key == null; o = pem.readObject()) {
        if (o instanceof PEMKeyPair || o instanceof PrivateKeyInfo || o instanceof PEMEncryptedKeyPair
            || o instanceof PKCS8EncryptedPrivateKeyInfo) {
          key = o;
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: a readable PEM private key file)", e);
    }
    if (key instanceof PEMEncryptedKeyPair || key instanceof PKCS8EncryptedPrivateKeyInfo) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: an unencrypted key, as Consul's"
          + " CONSUL_CLIENT_KEY is; decrypt it with openssl pkey)");
    }
    try {
      JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
      if (key instanceof PEMKeyPair pair) {
        return converter.getPrivateKey(pair.getPrivateKeyInfo()); // SEC1 may omit the public key
      }
      if (key instanceof PrivateKeyInfo info) {
        return converter.getPrivateKey(info);
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: an RSA, EC or EdDSA private key)", e);
    }
    throw new IllegalArgumentException(field + ": " + file + " (expected: a PEM private key: BEGIN PRIVATE KEY,"
        + " BEGIN RSA PRIVATE KEY or BEGIN EC PRIVATE KEY)");
  }

  /**
   * Fails unless {@code key} is the private key of {@code cert}: a probe signed with the key must
   * verify with the certificate. Without this check a mismatched pair builds and fails only in the
   * agent's handshake, with a message that names neither file.
   */
  static void requireMatch(X509Certificate cert, PrivateKey key, Path certFile, Path keyFile) {
    String algorithm = signatureAlgorithm(key);
    if (algorithm == null || !key.getAlgorithm().equals(cert.getPublicKey().getAlgorithm())) {
      throw mismatch(certFile, keyFile, key.getAlgorithm() + " key, " + cert.getPublicKey().getAlgorithm()
          + " certificate");
    }
    try {
      byte[] probe = "fairway key check".getBytes(StandardCharsets.US_ASCII);
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(cert.getPublicKey());
      verify.update(probe);
      if (!verify.verify(signature)) {
        throw mismatch(certFile, keyFile, "another key pair");
      }
    } catch (GeneralSecurityException e) {
      throw mismatch(certFile, keyFile, String.valueOf(e.getMessage()));
    }
  }

  private static @Nullable String signatureAlgorithm(PrivateKey key) {
    return switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
      default -> null;
    };
  }

  private static IllegalArgumentException mismatch(Path certFile, Path keyFile, String why) {
    return new IllegalArgumentException("clientKey: " + keyFile + " (expected: the private key of clientCertificate "
        + certFile + "; it does not match: " + why + ")");
  }
}
