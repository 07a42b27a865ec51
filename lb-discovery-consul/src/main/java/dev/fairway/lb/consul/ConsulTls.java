package dev.fairway.lb.consul;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.jspecify.annotations.Nullable;

/**
 * Builds the {@link SSLContext} for an https agent from what {@code CONSUL_CACERT},
 * {@code CONSUL_CAPATH}, {@code CONSUL_CLIENT_CERT}/{@code CONSUL_CLIENT_KEY},
 * {@code CONSUL_TLS_SERVER_NAME} and {@code CONSUL_HTTP_SSL_VERIFY} (or the builder options of the same
 * meaning) name: PEM files, read once at build. Every unreadable file or unusable key fails with an
 * {@link IllegalArgumentException} naming the option and the path.
 */
final class ConsulTls {
  private ConsulTls() {}

  /** The settings; paths may be null. */
  record Settings(boolean verify, @Nullable Path caCert, @Nullable Path caPath, @Nullable Path clientCert,
      @Nullable Path clientKey, @Nullable String serverName) {
    boolean isDefault() {
      return verify && caCert == null && caPath == null && clientCert == null && serverName == null;
    }
  }

  /** Null when the JDK's default context does (verify on, system CAs, no client certificate). */
  static @Nullable SSLContext context(Settings s) {
    if (s.isDefault()) {
      return null;
    }
    try {
      TrustManager trust = s.verify() ? trustManager(s) : new TrustAll();
      Path cert = s.clientCert();
      Path key = s.clientKey(); // the builder rejects one without the other
      KeyManager[] keys = cert == null || key == null ? null : keyManagers(cert, key);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, new TrustManager[] {trust}, null);
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("tls: " + e.getMessage() + " (expected: usable PEM certificates and key)", e);
    }
  }

  private static X509TrustManager trustManager(Settings s) throws GeneralSecurityException {
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    if (s.caCert() == null && s.caPath() == null) {
      tmf.init((KeyStore) null); // the JDK's CAs, e.g. for a server name override only
    } else {
      KeyStore ks = emptyKeyStore(KeyStore.getDefaultType());
      List<Certificate> cas = new ArrayList<>();
      if (s.caCert() != null) {
        cas.addAll(certificates("caCertificate", s.caCert()));
      }
      if (s.caPath() != null) {
        cas.addAll(certificatesIn(s.caPath()));
      }
      for (int i = 0; i < cas.size(); i++) {
        ks.setCertificateEntry("ca-" + i, cas.get(i));
      }
      tmf.init(ks);
    }
    X509TrustManager pkix = (X509TrustManager) tmf.getTrustManagers()[0];
    return s.serverName() == null ? pkix : new ServerNameTrustManager(pkix, s.serverName());
  }

  private static KeyStore emptyKeyStore(String type) throws GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance(type);
    try {
      ks.load(null, null);
    } catch (IOException e) {
      throw new IllegalStateException("an empty in-memory key store cannot fail to load", e);
    }
    return ks;
  }

  private static List<Certificate> certificatesIn(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: a directory of PEM CA certificates)");
    }
    List<Certificate> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files.sorted()::iterator) {
        String name = f.getFileName().toString().toLowerCase(Locale.ROOT);
        if (Files.isRegularFile(f) && (name.endsWith(".pem") || name.endsWith(".crt"))) {
          out.addAll(certificates("caPath", f));
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: a readable directory)", e);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: at least one .pem or .crt certificate)");
    }
    return out;
  }

  static List<Certificate> certificates(String field, Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
      if (certs.isEmpty()) {
        throw new CertificateException("no certificate");
      }
      return new ArrayList<>(certs);
    } catch (IOException | CertificateException e) {
      throw new IllegalArgumentException(field + ": " + file + " (expected: a readable PEM certificate file)", e);
    }
  }

  private static KeyManager[] keyManagers(Path certFile, Path keyFile) throws GeneralSecurityException {
    List<Certificate> chain = certificates("clientCertificate", certFile);
    PrivateKey key = privateKey(keyFile);
    KeyStore ks = emptyKeyStore("PKCS12");
    char[] password = new char[0];
    ks.setKeyEntry("client", key, password, chain.toArray(new Certificate[0]));
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, password);
    return kmf.getKeyManagers();
  }

  /** A PKCS#8 ({@code BEGIN PRIVATE KEY}) RSA/EC/EdDSA key or a PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) key. */
  static PrivateKey privateKey(Path file) {
    String pem;
    try {
      pem = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalArgumentException("clientKey: " + file + " (expected: a readable PEM private key file)", e);
    }
    byte[] der;
    if (pem.contains("-----BEGIN PRIVATE KEY-----")) {
      der = base64Between(pem, "PRIVATE KEY");
    } else if (pem.contains("-----BEGIN RSA PRIVATE KEY-----")) {
      der = pkcs1ToPkcs8(base64Between(pem, "RSA PRIVATE KEY"));
    } else {
      throw new IllegalArgumentException("clientKey: " + file + " (expected: an unencrypted PEM key, BEGIN PRIVATE"
          + " KEY or BEGIN RSA PRIVATE KEY; convert others with openssl pkcs8 -topk8 -nocrypt)");
    }
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException tryTheNext) {
        // the key's algorithm is not written in the PEM header; try each
      }
    }
    throw new IllegalArgumentException("clientKey: " + file + " (expected: an RSA, EC or EdDSA private key)");
  }

  private static byte[] base64Between(String pem, String label) {
    int start = pem.indexOf("-----BEGIN " + label + "-----") + label.length() + 16;
    int end = pem.indexOf("-----END " + label + "-----", start);
    return Base64.getMimeDecoder().decode(pem.substring(start, end < 0 ? pem.length() : end));
  }

  /** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo (version 0, rsaEncryption, NULL). */
  private static byte[] pkcs1ToPkcs8(byte[] pkcs1) {
    byte[] algorithm = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01,
        0x01, 0x05, 0x00};
    byte[] version = {0x02, 0x01, 0x00};
    byte[] octets = der(0x04, pkcs1);
    byte[] body = new byte[version.length + algorithm.length + octets.length];
    System.arraycopy(version, 0, body, 0, version.length);
    System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
    System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
    return der(0x30, body);
  }

  private static byte[] der(int tag, byte[] content) {
    int n = content.length;
    byte[] length = n < 0x80 ? new byte[] {(byte) n}
        : n < 0x100 ? new byte[] {(byte) 0x81, (byte) n}
        : n < 0x10000 ? new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n}
        : new byte[] {(byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n};
    byte[] out = new byte[1 + length.length + n];
    out[0] = (byte) tag;
    System.arraycopy(length, 0, out, 1, length.length);
    System.arraycopy(content, 0, out, 1 + length.length, n);
    return out;
  }

  /**
   * Checks the chain with the PKIX trust manager, then the certificate's names against the configured
   * server name instead of the address connected to (the agent is often reached by IP or
   * {@code localhost} while its certificate names {@code server.dc1.consul}).
   */
  static final class ServerNameTrustManager extends X509ExtendedTrustManager {
    private final X509TrustManager pkix;
    private final String serverName;

    ServerNameTrustManager(X509TrustManager pkix, String serverName) {
      this.pkix = pkix;
      this.serverName = serverName;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      pkix.checkServerTrusted(chain, authType); // the two-argument check does not look at host names
      if (!matches(chain[0], serverName)) {
        throw new CertificateException("the agent's certificate does not name " + serverName);
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      pkix.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      pkix.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      pkix.checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return pkix.getAcceptedIssuers();
    }
  }

  /** RFC 6125 matching on subjectAltNames: DNS names (one leading {@code *.} label) and IP addresses. */
  static boolean matches(X509Certificate cert, String name) throws CertificateParsingException {
    String want = name.toLowerCase(Locale.ROOT);
    Collection<List<?>> sans = cert.getSubjectAlternativeNames();
    if (sans == null) {
      return false;
    }
    for (List<?> san : sans) {
      int type = (Integer) san.get(0);
      String value = String.valueOf(san.get(1)).toLowerCase(Locale.ROOT);
      if (type == 2 && (value.equals(want) || wildcard(value, want))) {
        return true;
      }
      if (type == 7 && sameAddress(value, want)) {
        return true;
      }
    }
    return false;
  }

  private static boolean wildcard(String pattern, String name) {
    if (!pattern.startsWith("*.")) {
      return false;
    }
    int dot = name.indexOf('.');
    return dot > 0 && name.substring(dot).equals(pattern.substring(1));
  }

  private static boolean sameAddress(String a, String b) {
    try {
      // Both are literals here (the SAN is one by its type); no lookup happens for a literal.
      return (b.matches("[0-9.]+") || b.contains(":"))
          && InetAddress.getByName(a).equals(InetAddress.getByName(b));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** CONSUL_HTTP_SSL_VERIFY=false: any certificate, any name, as the CLI does. */
  static final class TrustAll extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
