package dev.fairway.lb.consul;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/**
 * An {@link SSLEngine} that hands every call to another one, for the two TLS adjustments the JDK
 * HTTP client has no option for: {@link RenamedEngine} (the peer seen as the server name, for the
 * JDK's name check) and {@link ConsulTls#withServerName} (the server name as SNI, whatever host the
 * client connected to). Subclasses override the one or two calls they change.
 */
class ForwardingSSLEngine extends SSLEngine {
  final SSLEngine engine;

  ForwardingSSLEngine(SSLEngine engine, @Nullable String peerHost) {
    super(peerHost, engine.getPeerPort());
    this.engine = engine;
  }

  @Override
  public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
    return engine.wrap(srcs, offset, length, dst);
  }

  @Override
  public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
    return engine.unwrap(src, dsts, offset, length);
  }

  @Override
  public @Nullable Runnable getDelegatedTask() {
    return engine.getDelegatedTask();
  }

  @Override
  public void closeInbound() throws SSLException {
    engine.closeInbound();
  }

  @Override
  public boolean isInboundDone() {
    return engine.isInboundDone();
  }

  @Override
  public void closeOutbound() {
    engine.closeOutbound();
  }

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
  public void setEnabledCipherSuites(String[] suites) {
    engine.setEnabledCipherSuites(suites);
  }

  @Override
  public String[] getSupportedProtocols() {
    return engine.getSupportedProtocols();
  }

  @Override
  public String[] getEnabledProtocols() {
    return engine.getEnabledProtocols();
  }

  @Override
  public void setEnabledProtocols(String[] protocols) {
    engine.setEnabledProtocols(protocols);
  }

  @Override
  public SSLSession getSession() {
    return engine.getSession();
  }

  @Override
  public @Nullable SSLSession getHandshakeSession() {
    return engine.getHandshakeSession();
  }

  @Override
  public void beginHandshake() throws SSLException {
    engine.beginHandshake();
  }

  @Override
  public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
    return engine.getHandshakeStatus();
  }

  @Override
  public void setUseClientMode(boolean mode) {
    engine.setUseClientMode(mode);
  }

  @Override
  public boolean getUseClientMode() {
    return engine.getUseClientMode();
  }

  @Override
  public void setNeedClientAuth(boolean need) {
    engine.setNeedClientAuth(need);
  }

  @Override
  public boolean getNeedClientAuth() {
    return engine.getNeedClientAuth();
  }

  @Override
  public void setWantClientAuth(boolean want) {
    engine.setWantClientAuth(want);
  }

  @Override
  public boolean getWantClientAuth() {
    return engine.getWantClientAuth();
  }

  @Override
  public void setEnableSessionCreation(boolean flag) {
    engine.setEnableSessionCreation(flag);
  }

  @Override
  public boolean getEnableSessionCreation() {
    return engine.getEnableSessionCreation();
  }

  @Override
  public SSLParameters getSSLParameters() {
    return engine.getSSLParameters();
  }

  @Override
  public void setSSLParameters(SSLParameters params) {
    engine.setSSLParameters(params);
  }

  @Override
  public @Nullable String getApplicationProtocol() {
    return engine.getApplicationProtocol();
  }

  @Override
  public @Nullable String getHandshakeApplicationProtocol() {
    return engine.getHandshakeApplicationProtocol();
  }

  @Override
  public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> selector) {
    engine.setHandshakeApplicationProtocolSelector(selector);
  }

  @Override
  public @Nullable BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
    return engine.getHandshakeApplicationProtocolSelector();
  }
}
