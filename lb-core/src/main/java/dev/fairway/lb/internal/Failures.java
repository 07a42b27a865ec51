package dev.fairway.lb.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.PortUnreachableException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedByInterruptException;
import java.security.cert.CertificateException;
import java.util.Locale;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.jspecify.annotations.Nullable;

/** The one failure classification of Fairway. Not public API (see the package documentation). */
public final class Failures {
  /** How deep a cause chain is followed: deep enough for wrapped exceptions, safe from cycles. */
  private static final int MAX_DEPTH = 8;

  private Failures() {}

  /**
   * Classifies a call's failure. An interruption anywhere in the chain makes it {@link
   * FailureKind#INTERRUPTED} ({@link #isInterruption}); otherwise the first cause in the chain (up
   * to 8 deep) that means something decides. Exceptions suppressed by the failure (OkHttp attaches the earlier tries of one call
   * that way) are considered too: if one of them may have sent the request, the whole failure may
   * have, so a {@link FailureKind#neverSent()} kind is downgraded to {@link FailureKind#IO}.
   *
   * <p>Never throws; {@code null} is {@link FailureKind#OTHER}.
   */
  public static FailureKind classify(@Nullable Throwable failure) {
    FailureKind kind = classifyChain(failure);
    if (kind.neverSent() && failure != null) {
      for (Throwable suppressed : failure.getSuppressed()) {
        if (!classifyChain(suppressed).neverSent()) {
          return FailureKind.IO;
        }
      }
    }
    return kind;
  }

  /**
   * What a failure says about the target its last try went to: the kind of its cause chain, as
   * {@link #classify}, but without the downgrade for suppressed earlier tries. When OkHttp's last
   * try could not connect after an earlier try on a pooled connection failed, the request may have
   * been sent (so {@link #classify} says {@link FailureKind#IO}, which keeps it from being resent),
   * yet the target did refuse the connection: passive health ejects on this one.
   *
   * <p>Never throws; {@code null} is {@link FailureKind#OTHER}.
   */
  public static FailureKind classifyTarget(@Nullable Throwable failure) {
    return classifyChain(failure);
  }

  /**
   * True if {@code failure} says the calling thread was interrupted ({@link
   * FailureKind#INTERRUPTED}): an {@link InterruptedException} (OkHttp 5's connect step throws one,
   * though it is not an {@link IOException}), a {@link ClosedByInterruptException}, or an {@link
   * InterruptedIOException} other than a timeout whose message starts with "interrupted" (Okio's,
   * when it finds the thread's interrupt flag set). Anywhere in the cause chain, up to 8 deep. A
   * {@link java.net.SocketTimeoutException} and OkHttp's call timeout ("timeout") are timeouts, not
   * interrupts. The thread's own interrupt flag is the other signal, which only the interrupted
   * thread can read; callers on that thread check both.
   *
   * <p>Never throws; {@code null} is false.
   */
  public static boolean isInterruption(@Nullable Throwable failure) {
    @Nullable Throwable t = failure;
    for (int depth = 0; t != null && depth < MAX_DEPTH; depth++, t = t.getCause()) {
      if (isInterruptionItself(t)) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static boolean isInterruptionItself(Throwable t) {
    if (t instanceof InterruptedException || t instanceof ClosedByInterruptException) {
      return true;
    }
    if (t instanceof InterruptedIOException && !(t instanceof SocketTimeoutException)) {
      String message = t.getMessage();
      return message != null && message.startsWith("interrupted");
    }
    return false;
  }

  private static FailureKind classifyChain(@Nullable Throwable failure) {
    if (isInterruption(failure)) {
      return FailureKind.INTERRUPTED; // before the kinds below: an interrupt may surface wrapped in any of them
    }
    @Nullable Throwable t = failure;
    for (int depth = 0; t != null && depth < MAX_DEPTH; depth++, t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof NoRouteToHostException
          || t instanceof UnknownHostException
          || t instanceof PortUnreachableException) {
        return FailureKind.CONNECT;
      }
      if (t instanceof SSLPeerUnverifiedException) {
        return FailureKind.CERTIFICATE;
      }
      if (t instanceof SSLHandshakeException) {
        return hasCause(t, CertificateException.class) ? FailureKind.CERTIFICATE : FailureKind.TLS_HANDSHAKE;
      }
      if (t instanceof SocketTimeoutException) {
        // The JDK reports a connect timeout as "Connect timed out"; read timeouts say "Read timed
        // out" or OkHttp's "timeout", and those may come after the request was sent.
        String message = t.getMessage();
        return message != null && message.toLowerCase(Locale.ROOT).contains("connect")
            ? FailureKind.CONNECT
            : FailureKind.TIMEOUT;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return hasCause(failure, IOException.class) ? FailureKind.IO : FailureKind.OTHER;
  }

  private static boolean hasCause(@Nullable Throwable failure, Class<? extends Throwable> type) {
    @Nullable Throwable t = failure;
    for (int depth = 0; t != null && depth < MAX_DEPTH; depth++, t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }
}
