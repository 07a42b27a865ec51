package dev.fairway.lb.consul;

import java.nio.ByteBuffer;
import java.security.Principal;
import java.security.cert.Certificate;
import java.util.List;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import org.jspecify.annotations.Nullable;

/**
 * A view of a handshake in progress in which the peer is {@code serverName}: handed to the JDK's
 * trust manager so that its own endpoint identification checks the agent's certificate against the
 * configured server name. It only answers questions (the handshake session, the parameters, with
 * endpoint identification {@code HTTPS}); it never carries data.
 */
final class RenamedEngine extends SSLEngine {
  private final SSLEngine engine;
  private final String serverName;

  RenamedEngine(SSLEngine engine, String serverName) {
    super(serverName, engine.getPeerPort());
    this.engine = engine;
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

  // A view only: no data passes through it.
  @Override
  public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
    throw new SSLException("a view of a handshake, not an engine");
  }

  @Override
  public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
    throw new SSLException("a view of a handshake, not an engine");
  }

  @Override
  public @Nullable Runnable getDelegatedTask() {
    return null;
  }

  @Override
  public void closeInbound() {}

  @Override
  public boolean isInboundDone() {
    return engine.isInboundDone();
  }

  @Override
  public void closeOutbound() {}

  @Override
  public boolean isOutboundDone() {
    return engine.isOutboundDone();
  }

  @Override
  public String[] getSupportedCipherSuites() {
    return engine.getSupportedCipherSuites();
  }

  @Override
  public String[] getEnabledCipherSuites() {
    return engine.getEnabledCipherSuites();
  }

  @Override
  public void setEnabledCipherSuites(String[] suites) {}

  @Override
  public String[] getSupportedProtocols() {
    return engine.getSupportedProtocols();
  }

  @Override
  public String[] getEnabledProtocols() {
    return engine.getEnabledProtocols();
  }

  @Override
  public void setEnabledProtocols(String[] protocols) {}

  @Override
  public SSLSession getSession() {
    return engine.getSession();
  }

  @Override
  public void beginHandshake() {}

  @Override
  public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
    return engine.getHandshakeStatus();
  }

  @Override
  public void setUseClientMode(boolean mode) {}

  @Override
  public boolean getUseClientMode() {
    return engine.getUseClientMode();
  }

  @Override
  public void setNeedClientAuth(boolean need) {}

  @Override
  public boolean getNeedClientAuth() {
    return engine.getNeedClientAuth();
  }

  @Override
  public void setWantClientAuth(boolean want) {}

  @Override
  public boolean getWantClientAuth() {
    return engine.getWantClientAuth();
  }

  @Override
  public void setEnableSessionCreation(boolean flag) {}

  @Override
  public boolean getEnableSessionCreation() {
    return engine.getEnableSessionCreation();
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
