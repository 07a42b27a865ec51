package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.Test;

class FailuresTest {
  @Test
  void connectPhaseFailures_neverSent_ejectAtOnce() {
    for (Throwable t : new Throwable[] {
        new ConnectException("Connection refused"),
        new NoRouteToHostException("No route to host"),
        new UnknownHostException("orders-7"),
        new SocketTimeoutException("Connect timed out"),
        new IOException("wrapped", new ConnectException("Connection refused"))}) {
      FailureKind kind = Failures.classify(t);
      assertThat(kind).as(t.toString()).isEqualTo(FailureKind.CONNECT);
      assertThat(kind.neverSent()).isTrue();
      assertThat(kind.ejectsAtOnce()).isTrue();
      assertThat(kind.worthRetrying()).isTrue();
    }
  }

  @Test
  void readTimeout_mayHaveBeenSent() {
    assertThat(Failures.classify(new SocketTimeoutException("Read timed out"))).isEqualTo(FailureKind.TIMEOUT);
    assertThat(Failures.classify(new SocketTimeoutException("timeout"))).isEqualTo(FailureKind.TIMEOUT);
    assertThat(Failures.classify(new SocketTimeoutException(null))).isEqualTo(FailureKind.TIMEOUT);
    assertThat(FailureKind.TIMEOUT.neverSent()).isFalse();
  }

  @Test
  void certificateErrors_areNotWorthRetrying() {
    SSLHandshakeException expired = new SSLHandshakeException("PKIX path validation failed");
    expired.initCause(new CertificateExpiredException("NotAfter: 2020"));
    assertThat(Failures.classify(expired)).isEqualTo(FailureKind.CERTIFICATE);
    assertThat(Failures.classify(new SSLPeerUnverifiedException("Hostname orders not verified")))
        .isEqualTo(FailureKind.CERTIFICATE);
    assertThat(FailureKind.CERTIFICATE.worthRetrying()).isFalse();
    assertThat(Failures.classify(new SSLHandshakeException("Remote host terminated the handshake")))
        .isEqualTo(FailureKind.TLS_HANDSHAKE);
  }

  @Test
  void suppressedEarlierTryThatMayHaveSent_downgradesToIo() {
    ConnectException last = new ConnectException("Connection refused");
    last.addSuppressed(new IOException("unexpected end of stream"));
    assertThat(Failures.classify(last)).isEqualTo(FailureKind.IO);
    ConnectException onlyConnects = new ConnectException("Connection refused");
    onlyConnects.addSuppressed(new ConnectException("Connection refused"));
    assertThat(Failures.classify(onlyConnects)).isEqualTo(FailureKind.CONNECT);
  }

  @Test
  void classifyTarget_judgesTheLastTry_notTheSuppressedOnes() {
    ConnectException last = new ConnectException("Connection refused");
    last.addSuppressed(new IOException("unexpected end of stream"));
    assertThat(Failures.classifyTarget(last)).isEqualTo(FailureKind.CONNECT);
    assertThat(Failures.classifyTarget(new IOException("x", new ConnectException("refused"))))
        .isEqualTo(FailureKind.CONNECT);
    assertThat(Failures.classifyTarget(new IOException("unexpected end of stream"))).isEqualTo(FailureKind.IO);
    assertThat(Failures.classifyTarget(null)).isEqualTo(FailureKind.OTHER);
  }

  @Test
  void interruptions_areNeitherSentNorRetried_andSayNothingAboutTheTarget() {
    for (Throwable t : new Throwable[] {
        new InterruptedException(), // OkHttp 5's connect step, not an IOException
        new InterruptedIOException("interrupted"), // Okio, finding the thread's flag set
        new InterruptedIOException("interrupted while waiting for a hedge"),
        new java.nio.channels.ClosedByInterruptException(),
        new IOException("wrapped", new InterruptedException()),
        new ConnectException("refused") {
          @Override
          public synchronized Throwable getCause() {
            return new InterruptedException(); // an interrupt that surfaced as another kind
          }
        }}) {
      assertThat(Failures.isInterruption(t)).as(t.toString()).isTrue();
      assertThat(Failures.classify(t)).as(t.toString()).isEqualTo(FailureKind.INTERRUPTED);
      assertThat(Failures.classifyTarget(t)).as(t.toString()).isEqualTo(FailureKind.INTERRUPTED);
    }
    assertThat(FailureKind.INTERRUPTED.worthRetrying()).isFalse();
    assertThat(FailureKind.INTERRUPTED.neverSent()).isFalse();
    assertThat(FailureKind.INTERRUPTED.ejectsAtOnce()).isFalse();
  }

  @Test
  void timeouts_areNotInterruptions() {
    assertThat(Failures.isInterruption(new SocketTimeoutException("interrupted"))).isFalse(); // a timeout, whatever it says
    assertThat(Failures.isInterruption(new InterruptedIOException("timeout"))).isFalse(); // OkHttp's call timeout
    assertThat(Failures.isInterruption(new InterruptedIOException(null))).isFalse();
    assertThat(Failures.isInterruption(null)).isFalse();
    assertThat(Failures.classify(new InterruptedIOException("timeout"))).isEqualTo(FailureKind.IO);
  }

  @Test
  void otherFailures() {
    assertThat(Failures.classify(new IOException("unexpected end of stream"))).isEqualTo(FailureKind.IO);
    assertThat(Failures.classify(new InterruptedIOException("canceled"))).isEqualTo(FailureKind.IO);
    assertThat(Failures.classify(new IllegalStateException("bug"))).isEqualTo(FailureKind.OTHER);
    assertThat(Failures.classify(new RuntimeException(new IOException("x")))).isEqualTo(FailureKind.IO);
    assertThat(Failures.classify(null)).isEqualTo(FailureKind.OTHER);
    RuntimeException selfCaused = new RuntimeException("loop") {
      @Override
      public synchronized Throwable getCause() {
        return this;
      }
    };
    assertThat(Failures.classify(selfCaused)).isEqualTo(FailureKind.OTHER);
  }

  @Test
  void args_messages() {
    assertThat(Args.quote(null)).isEqualTo("null");
    assertThat(Args.quote(" ")).isEqualTo("\" \"");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Args.requireUnset("strategy", "round-robin"))
        .isInstanceOf(IllegalStateException.class).hasMessage("strategy was already set to \"round-robin\"");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Args.requireUnsetSecret("token", "s3cret"))
        .isInstanceOf(IllegalStateException.class).hasMessage("token was already set");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Args.requireArgument(false, "weight", 0, "1..1000000"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("weight: 0 (expected: 1..1000000)");
  }
}
