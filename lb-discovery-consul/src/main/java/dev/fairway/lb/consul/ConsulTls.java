package dev.fairway.lb.consul;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;

/**
 * Builds the TLS setup of an https agent from what {@code CONSUL_CACERT}, {@code CONSUL_CAPATH},
 * {@code CONSUL_CLIENT_CERT}/{@code CONSUL_CLIENT_KEY}, {@code CONSUL_TLS_SERVER_NAME} and
 * {@code CONSUL_HTTP_SSL_VERIFY} (or the builder options of the same meaning) name. PEM files are read
 * once, at build, by {@link PemFiles} (BouncyCastle); trust, key and name checks are the JDK's
 * ({@link NameCheckingTrustManager}). Every unreadable file or unusable key fails with an
 * {@link IllegalArgumentException} naming the option and the path.
 *
 * <p>What the JDK HTTP client cannot do, and how it is met: it checks the certificate against the
 * URI's host only (met by {@link NameCheckingTrustManager}); and it sends the URI's host as SNI, or no
 * SNI for an IP address, with no option for another name ({@link #withServerName} wraps the context so
 * that its engines send the server name, as Consul's Go client does; none for an IP server name).
 */
final class ConsulTls {
  private static final System.Logger LOG = System.getLogger(ConsulDiscovery.class.getName());

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
      TrustManager trust = s.verify() ? new NameCheckingTrustManager(pkix(s), s.serverName()) : new TrustAll();
      Path cert = s.clientCert();
      Path key = s.clientKey(); // the settings reject one without the other
      KeyManager[] keys = cert == null || key == null ? null : keyManagers(cert, key);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, new TrustManager[] {trust}, null);
      String name = s.serverName();
      return name == null || NameCheckingTrustManager.isIpLiteral(name) ? ctx : withServerName(ctx, name);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("tls: " + e.getMessage() + " (expected: usable PEM certificates and key)", e);
    }
  }

  /**
   * {@code context}, whose engines send {@code serverName} as SNI whatever host the client connected
   * to (the JDK client sends the URI's host, or no SNI for an IP address, and has no option for
   * another name): what Consul's Go client does with {@code CONSUL_TLS_SERVER_NAME}.
   */
  static SSLContext withServerName(SSLContext context, String serverName) {
    return new SSLContext(new SniSpi(context, List.of(new SNIHostName(serverName))), context.getProvider(),
        context.getProtocol()) {};
  }

  private static final class SniSpi extends SSLContextSpi {
    private final SSLContext context;
    private final List<SNIServerName> sni;

    SniSpi(SSLContext context, List<SNIServerName> sni) {
      this.context = context;
      this.sni = sni;
    }

    @Override
    protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom random) {
      throw new IllegalStateException("initialised at build");
    }

    @Override
    protected SSLSocketFactory engineGetSocketFactory() {
      return context.getSocketFactory();
    }

    @Override
    protected SSLServerSocketFactory engineGetServerSocketFactory() {
      return context.getServerSocketFactory();
    }

    @Override
    protected SSLEngine engineCreateSSLEngine() {
      return new SniEngine(context.createSSLEngine(), sni);
    }

    @Override
    protected SSLEngine engineCreateSSLEngine(String host, int port) {
      return new SniEngine(context.createSSLEngine(host, port), sni);
    }

    @Override
    protected SSLSessionContext engineGetServerSessionContext() {
      return context.getServerSessionContext();
    }

    @Override
    protected SSLSessionContext engineGetClientSessionContext() {
      return context.getClientSessionContext();
    }

    @Override
    protected SSLParameters engineGetDefaultSSLParameters() {
      return context.getDefaultSSLParameters();
    }

    @Override
    protected SSLParameters engineGetSupportedSSLParameters() {
      return context.getSupportedSSLParameters();
    }
  }

  /** An engine whose parameters always ask for the configured server name as SNI. */
  private static final class SniEngine extends ForwardingSSLEngine {
    private final List<SNIServerName> sni;

    SniEngine(SSLEngine engine, List<SNIServerName> sni) {
      super(engine, engine.getPeerHost());
      this.sni = sni;
      setSSLParameters(engine.getSSLParameters());
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
      params.setServerNames(sni);
      engine.setSSLParameters(params);
    }
  }

  private static X509ExtendedTrustManager pkix(Settings s) throws GeneralSecurityException {
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    if (s.caCert() == null && s.caPath() == null) {
      tmf.init((KeyStore) null); // the JDK's CAs, e.g. for a server name override only
    } else {
      KeyStore ks = emptyKeyStore(KeyStore.getDefaultType());
      List<X509Certificate> cas = new ArrayList<>();
      if (s.caCert() != null) {
        cas.addAll(PemFiles.certificates("caCertificate", s.caCert()));
      }
      if (s.caPath() != null) {
        cas.addAll(certificatesIn(s.caPath()));
      }
      for (int i = 0; i < cas.size(); i++) {
        ks.setCertificateEntry("ca-" + i, cas.get(i));
      }
      tmf.init(ks);
    }
    for (TrustManager tm : tmf.getTrustManagers()) {
      if (tm instanceof X509ExtendedTrustManager x) {
        return x;
      }
    }
    throw new GeneralSecurityException("the JDK has no X509ExtendedTrustManager");
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

  /**
   * Every regular file directly in {@code dir}, links followed, as Consul's Go client reads
   * {@code CONSUL_CAPATH}: so a c_rehash folder ({@code abcd1234.0} links) works. A file without a PEM
   * certificate is passed over with a warning; a folder without any fails.
   */
  private static List<X509Certificate> certificatesIn(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: a directory of PEM CA certificates)");
    }
    List<X509Certificate> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files.sorted()::iterator) {
        if (!Files.isRegularFile(f)) {
          continue;
        }
        List<X509Certificate> certs = PemFiles.certificatesOrEmpty("caPath", f);
        if (certs.isEmpty()) {
          LOG.log(Level.WARNING, "caPath: {0} holds no PEM certificate; passed over", f);
        }
        out.addAll(certs);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: a readable directory)", e);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("caPath: " + dir + " (expected: at least one file with a PEM certificate)");
    }
    return out;
  }

  private static KeyManager[] keyManagers(Path certFile, Path keyFile) throws GeneralSecurityException {
    List<X509Certificate> chain = PemFiles.certificates("clientCertificate", certFile);
    PrivateKey key = PemFiles.privateKey("clientKey", keyFile);
    PemFiles.requireMatch(chain.get(0), key, certFile, keyFile);
    KeyStore ks = emptyKeyStore("PKCS12");
    char[] password = new char[0];
    ks.setKeyEntry("client", key, password, chain.toArray(new X509Certificate[0]));
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, password);
    return kmf.getKeyManagers();
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
