package dev.fairway.lb.consul;

import java.io.StringWriter;
import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.tls.HeldCertificate;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates made at test time with BouncyCastle, for what okhttp-tls's HeldCertificate cannot
 * spell: a DNS name that looks like an IP address, a validity in the past, any wildcard, a key in
 * SEC1 or PKCS#1 PEM. EC P-256 keys unless RSA is asked for (fast to make).
 */
final class TestCerts {
  private static final AtomicLong SERIAL = new AtomicLong(1);

  private TestCerts() {}

  /** A key pair and its certificate. */
  record Cert(KeyPair keys, X509Certificate certificate) {
    HeldCertificate held() {
      return new HeldCertificate(keys, certificate);
    }

    String certificatePem() {
      return pem(certificate);
    }

    String pkcs8KeyPem() {
      try {
        return pem(new JcaPKCS8Generator(keys.getPrivate(), null));
      } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
        throw new IllegalStateException(e);
      }
    }

    /**
     * SEC1 ({@code BEGIN EC PRIVATE KEY}, with the named curve inside, as Go's
     * {@code x509.MarshalECPrivateKey} writes it for {@code consul tls cert create}) for EC keys,
     * PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) for RSA.
     */
    String traditionalKeyPem() {
      if (!(keys.getPrivate() instanceof java.security.interfaces.ECPrivateKey ec)) {
        return pem(keys.getPrivate());
      }
      try {
        org.bouncycastle.asn1.pkcs.PrivateKeyInfo info =
            org.bouncycastle.asn1.pkcs.PrivateKeyInfo.getInstance(ec.getEncoded());
        org.bouncycastle.asn1.sec.ECPrivateKey sec1 = new org.bouncycastle.asn1.sec.ECPrivateKey(
            ec.getParams().getOrder().bitLength(), ec.getS(), info.getPrivateKeyAlgorithm().getParameters());
        return pem(new org.bouncycastle.util.io.pem.PemObject("EC PRIVATE KEY", sec1.getEncoded()));
      } catch (java.io.IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  static KeyPair ec() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static KeyPair rsa() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      return g.generateKeyPair();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Cert ca(String commonName) {
    KeyPair keys = ec();
    return sign(keys, null, commonName, Instant.now().minus(Duration.ofHours(1)), Instant.now().plus(Duration.ofDays(1)),
        true);
  }

  /** A server or client certificate from {@code issuer}, valid from an hour ago for a day, with these SANs. */
  static Cert leaf(Cert issuer, GeneralName... sans) {
    return leaf(issuer, ec(), Instant.now().minus(Duration.ofHours(1)), Instant.now().plus(Duration.ofDays(1)), sans);
  }

  static Cert leaf(Cert issuer, KeyPair keys, Instant notBefore, Instant notAfter, GeneralName... sans) {
    return sign(keys, issuer, "leaf", notBefore, notAfter, false, sans);
  }

  static GeneralName dns(String name) {
    return new GeneralName(GeneralName.dNSName, name);
  }

  static GeneralName ip(String address) {
    return new GeneralName(GeneralName.iPAddress, address);
  }

  private static Cert sign(KeyPair keys, Cert issuer, String commonName, Instant notBefore, Instant notAfter,
      boolean ca, GeneralName... sans) {
    try {
      X500Name subject = new X500Name("CN=" + commonName);
      X500Name issuerName = issuer == null ? subject
          : X500Name.getInstance(issuer.certificate().getSubjectX500Principal().getEncoded());
      JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuerName,
          BigInteger.valueOf(SERIAL.getAndIncrement()), Date.from(notBefore), Date.from(notAfter), subject,
          keys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
      if (ca) {
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      }
      if (sans.length > 0) {
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
      }
      KeyPair signer = issuer == null ? keys : issuer.keys();
      String algorithm = signer.getPrivate().getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
      X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
          b.build(new JcaContentSignerBuilder(algorithm).build(signer.getPrivate())));
      return new Cert(keys, cert);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(Object o) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      w.writeObject(o);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }
}
