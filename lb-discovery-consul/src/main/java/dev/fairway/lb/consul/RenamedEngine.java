package dev.fairway.lb.consul;

import java.security.Principal;
import java.security.cert.Certificate;
import java.util.List;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import org.jspecify.annotations.Nullable;

/**
 * A view of a handshake in progress in which the peer is {@code serverName}: handed to the JDK's
 * trust manager so that its own endpoint identification checks the agent's certificate against the
 * configured server name. Only the trust manager sees it, and asks it questions (the handshake
 * session, the parameters, with endpoint identification {@code HTTPS}); all else is forwarded.
 */
final class RenamedEngine extends ForwardingSSLEngine {
  private final String serverName;

  RenamedEngine(SSLEngine engine, String serverName) {
    super(engine, serverName);
    this.serverName = serverName;
  }

  @Override
  public @Nullable SSLSession getHandshakeSession() {
    SSLSession s = engine.getHandshakeSession();
    return s == null ? null : new RenamedSession(s, serverName, getPeerPort());
  }

  @Override
  public SSLParameters getSSLParameters() {
    SSLParameters p = engine.getSSLParameters();
    p.setEndpointIdentificationAlgorithm("HTTPS");
    p.setServerNames(List.of());
    return p;
  }

  /** The handshake session with {@code serverName} as its peer and no SNI, so the JDK checks that name only. */
  private static final class RenamedSession extends ExtendedSSLSession {
    private final SSLSession session;
    private final String peerHost;
    private final int peerPort;

    RenamedSession(SSLSession session, String peerHost, int peerPort) {
      this.session = session;
      this.peerHost = peerHost;
      this.peerPort = peerPort;
    }

    @Override
    public String getPeerHost() {
      return peerHost;
    }

    @Override
    public int getPeerPort() {
      return peerPort;
    }

    @Override
    public List<SNIServerName> getRequestedServerNames() {
      return List.of();
    }

    @Override
    public String[] getLocalSupportedSignatureAlgorithms() {
      return session instanceof ExtendedSSLSession e ? e.getLocalSupportedSignatureAlgorithms() : new String[0];
    }

    @Override
    public String[] getPeerSupportedSignatureAlgorithms() {
      return session instanceof ExtendedSSLSession e ? e.getPeerSupportedSignatureAlgorithms() : new String[0];
    }

    @Override
    public List<byte[]> getStatusResponses() {
      return session instanceof ExtendedSSLSession e ? e.getStatusResponses() : List.of();
    }

    @Override
    public byte[] getId() {
      return session.getId();
    }

    @Override
    public SSLSessionContext getSessionContext() {
      return session.getSessionContext();
    }

    @Override
    public long getCreationTime() {
      return session.getCreationTime();
    }

    @Override
    public long getLastAccessedTime() {
      return session.getLastAccessedTime();
    }

    @Override
    public void invalidate() {}

    @Override
    public boolean isValid() {
      return session.isValid();
    }

    @Override
    public void putValue(String name, Object value) {}

    @Override
    public Object getValue(String name) {
      return session.getValue(name);
    }

    @Override
    public void removeValue(String name) {}

    @Override
    public String[] getValueNames() {
      return session.getValueNames();
    }

    @Override
    public Certificate[] getPeerCertificates() throws SSLPeerUnverifiedException {
      return session.getPeerCertificates();
    }

    @Override
    public Certificate[] getLocalCertificates() {
      return session.getLocalCertificates();
    }

    @Override
    public Principal getPeerPrincipal() throws SSLPeerUnverifiedException {
      return session.getPeerPrincipal();
    }

    @Override
    public Principal getLocalPrincipal() {
      return session.getLocalPrincipal();
    }

    @Override
    public String getCipherSuite() {
      return session.getCipherSuite();
    }

    @Override
    public String getProtocol() {
      return session.getProtocol();
    }

    @Override
    public int getPacketBufferSize() {
      return session.getPacketBufferSize();
    }

    @Override
    public int getApplicationBufferSize() {
      return session.getApplicationBufferSize();
    }
  }
}
