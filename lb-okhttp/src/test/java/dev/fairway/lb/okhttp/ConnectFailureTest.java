package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class ConnectFailureTest {

  @Test
  void isConnectFailure_acceptsFailuresBeforeAConnectionExisted() {
    assertThat(LoadBalancingInterceptor.isConnectFailure(new ConnectException("Connection refused"))).isTrue();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new SocketTimeoutException("Connect timed out"))).isTrue();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new UnknownHostException("orders-7"))).isTrue();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new SSLHandshakeException("Remote host terminated the handshake"))).isTrue();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new IOException("wrapped", new ConnectException("refused")))).isTrue();
  }

  @Test
  void isConnectFailure_rejectsFailuresAfterTheRequestMayHaveBeenSent() {
    assertThat(LoadBalancingInterceptor.isConnectFailure(new SocketTimeoutException("timeout"))).isFalse();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new SocketTimeoutException("Read timed out"))).isFalse();
    assertThat(LoadBalancingInterceptor.isConnectFailure(new IOException("unexpected end of stream", new EOFException()))).isFalse();
    // OkHttp re-sent on a fresh connection after a dead pooled one: the first try may have been sent.
    ConnectException afterStale = new ConnectException("Failed to connect");
    afterStale.addSuppressed(new IOException("unexpected end of stream"));
    assertThat(LoadBalancingInterceptor.isConnectFailure(afterStale)).isFalse();
  }
}
