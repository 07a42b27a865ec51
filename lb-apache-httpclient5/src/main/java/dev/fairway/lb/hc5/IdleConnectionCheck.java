package dev.fairway.lb.hc5;

import java.io.IOException;
import java.net.ConnectException;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.HttpClientConnection;
import org.apache.hc.core5.http.io.HttpResponseInformationCallback;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.io.CloseMode;

/**
 * HttpClient's request executor (set by {@link FairwayHttpClient5#customize(
 * org.apache.hc.client5.http.impl.classic.HttpClientBuilder)}), which checks a pooled connection
 * before it writes a balanced request on it: when the connection has been idle for {@link
 * #CHECK_AFTER_IDLE_NANOS} or longer, HttpClient's own stale check ({@link
 * HttpClientConnection#isStale()}: has the server closed it?) runs first, and a connection the
 * server closed is closed here and {@link StaleConnectionException} thrown before a byte of the
 * request is written. {@link BalancedExchange} then sends the same attempt again on another
 * connection of the same target, for any method: nothing was sent.
 *
 * <p>Why Fairway needs it and the plain client does not: HttpClient's pool checks a connection
 * only after {@code validateAfterInactivity} (2 s by default), and a server may close idle
 * connections sooner (nginx's {@code keepalive_timeout}). A plain client sends a host's calls over
 * that host's freshest connection; Fairway splits the same calls over several targets, and its
 * balancer sends to a target it has not used for a while, so its connections to that target are
 * idle longer than the plain client's ever are. A POST written on a connection the server has
 * closed fails ({@code NoHttpResponseException}) and must not be resent.
 *
 * <p>Requests Fairway does not balance go out unchecked, as HttpClient sends them. A connection's
 * last use is kept weakly (a connection that is dropped leaves no entry). Thread-safe.
 */
final class IdleConnectionCheck extends HttpRequestExecutor {
  /**
   * How long a connection must have been idle (since its last balanced response began) before it
   * is checked; the check reads with a 1 ms timeout when the connection is still open, so checking
   * every reuse would add that to every call.
   */
  static final long CHECK_AFTER_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final LongSupplier ticker;
  private final Map<HttpClientConnection, Long> lastUsed = Collections.synchronizedMap(new WeakHashMap<>());

  IdleConnectionCheck(LongSupplier ticker) {
    this.ticker = ticker;
  }

  @Override
  public ClassicHttpResponse execute(ClassicHttpRequest request, HttpClientConnection conn,
      HttpResponseInformationCallback informationCallback, HttpContext context) throws IOException, HttpException {
    if (!BalancedRetryStrategy.balanced(context)) {
      return super.execute(request, conn, informationCallback, context);
    }
    Long last = lastUsed.get(conn);
    if (last != null && ticker.getAsLong() - last >= CHECK_AFTER_IDLE_NANOS && isStale(conn)) {
      lastUsed.remove(conn);
      conn.close(CloseMode.IMMEDIATE);
      throw new StaleConnectionException("the pooled connection to " + request.getAuthority()
          + " was closed by the server while idle; the request was not sent");
    }
    try {
      return super.execute(request, conn, informationCallback, context);
    } finally {
      lastUsed.put(conn, ticker.getAsLong());
    }
  }

  private static boolean isStale(HttpClientConnection conn) {
    try {
      return conn.isStale();
    } catch (IOException e) {
      return true; // as HttpClient's pool judges a connection whose check fails
    }
  }

  /**
   * A balanced request was not sent: the pooled connection it was to go out on had been closed by
   * the server. A {@link ConnectException}, as a connection that could not be made: nothing reached
   * the server, so any method may go again.
   */
  static final class StaleConnectionException extends ConnectException {
    private static final long serialVersionUID = 1L;

    StaleConnectionException(String message) {
      super(message);
    }
  }
}
