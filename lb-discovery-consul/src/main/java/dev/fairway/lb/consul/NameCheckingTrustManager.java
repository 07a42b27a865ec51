package dev.fairway.lb.consul;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;

/**
 * The JDK's PKIX trust manager, asked to check the agent's certificate against the configured server
 * name ({@code CONSUL_TLS_SERVER_NAME}) instead of the address connected to, plus one rule the JDK
 * applies only to certificates from its own public CAs.
 *
 * <ul>
 *   <li>Chain, validity and names are the JDK's own checks (endpoint identification {@code HTTPS},
 *       RFC 2818 / RFC 6125: a wildcard only as the whole left-most label and over one label; an IP
 *       address only against IP SANs). With a server name, the JDK checks it through a
 *       {@link RenamedEngine}, a view of the handshake in which the peer is that name.
 *   <li>What is added: a wildcard over a single label ({@code *.com}) is refused, as RFC 6125 section
 *       7.2 advises and as the JDK does for public CAs; {@code *.consul}, under Consul's own
 *       top-level domain, is the one such wildcard accepted.
 * </ul>
 *
 * <p>Why not the JDK HTTP client alone: it checks the URI's host and nothing else, and has no option
 * for another name; Consul agents are reached as {@code 127.0.0.1} while their certificates name
 * {@code server.<dc>.consul}. Thread-safe and stateless.
 */
final class NameCheckingTrustManager extends X509ExtendedTrustManager {
  /** Consul's default DNS domain: {@code *.consul} is the single-label wildcard accepted. */
  static final String CONSUL_DOMAIN = "consul";

  private final X509ExtendedTrustManager pkix;
  private final @Nullable String serverName; // null: the address connected to

  NameCheckingTrustManager(X509ExtendedTrustManager pkix, @Nullable String serverName) {
    this.pkix = pkix;
    this.serverName = serverName;
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    if (serverName == null) {
      pkix.checkServerTrusted(chain, authType, engine);
      requireNoTopLevelWildcard(chain[0], engine.getPeerHost());
    } else {
      pkix.checkServerTrusted(chain, authType, new RenamedEngine(engine, serverName));
      requireNoTopLevelWildcard(chain[0], serverName);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    throw new CertificateException("the Consul client checks agents on SSLEngine connections only");
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    throw new CertificateException("a server certificate needs a connection to check its name against");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    pkix.checkClientTrusted(chain, authType);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    pkix.checkClientTrusted(chain, authType, socket);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    pkix.checkClientTrusted(chain, authType, engine);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return pkix.getAcceptedIssuers();
  }

  /**
   * After the JDK found a SAN that matches {@code name}: fails if the only ones that do are wildcards
   * over a single label other than {@value #CONSUL_DOMAIN}.
   */
  static void requireNoTopLevelWildcard(X509Certificate cert, @Nullable String name) throws CertificateException {
    if (name == null || isIpLiteral(name)) {
      return;
    }
    String want = name.toLowerCase(Locale.ROOT);
    Collection<List<?>> sans;
    try {
      sans = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      throw new CertificateException("the agent's certificate has unreadable subjectAltNames", e);
    }
    if (sans == null) {
      return; // the JDK matched no SAN then; nothing to add
    }
    boolean topLevelWildcardOnly = false;
    for (List<?> san : sans) {
      if (!Integer.valueOf(2).equals(san.get(0))) {
        continue;
      }
      String dns = String.valueOf(san.get(1)).toLowerCase(Locale.ROOT);
      if (dns.equals(want)) {
        return;
      }
      if (dns.startsWith("*.") && want.endsWith(dns.substring(1))) {
        String suffix = dns.substring(2);
        if (suffix.contains(".") || suffix.equals(CONSUL_DOMAIN)) {
          return;
        }
        topLevelWildcardOnly = true;
      }
    }
    if (topLevelWildcardOnly) {
      throw new CertificateException("the agent's certificate names " + name + " only through a wildcard over a"
          + " top-level domain, which is refused");
    }
  }

  static boolean isIpLiteral(String host) {
    return host.indexOf(':') >= 0 || host.matches("[0-9]+(\\.[0-9]+){3}");
  }
}
