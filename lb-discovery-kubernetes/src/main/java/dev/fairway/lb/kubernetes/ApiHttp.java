package dev.fairway.lb.kubernetes;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The two requests the watch makes of the API server: a plain GET (the list) and a streaming GET (the
 * watch, one JSON event per line). An interface so that the watch's decisions can be driven by a
 * scripted transport; {@link JdkApiHttp} is the real one.
 */
interface ApiHttp {
  /** A reply that was read to the end: status, body, and the {@code Retry-After} header if any. */
  record Reply(int status, String body, @Nullable String retryAfter) {}

  /**
   * What a watch reports, from the HTTP client's threads. Either {@link #opened()} followed by lines
   * and one {@link #ended}, or one {@link #refused} (a status other than 200), or one {@link #ended} with a
   * failure before any header arrived.
   */
  interface WatchListener {
    void opened();

    void line(String line);

    /** The stream ended: normally ({@code failure} null, the server closed it) or not. */
    void ended(@Nullable Throwable failure);

    void refused(Reply reply);
  }

  /** A watch in progress; {@link #cancel()} closes its stream. Idempotent. */
  interface Call {
    void cancel();
  }

  /** {@code GET path}; the future fails on a transport error or after {@code timeout}. */
  CompletableFuture<Reply> get(String pathAndQuery, Duration timeout);

  /** A streaming {@code GET path}; the listener hears the rest. Never throws: a failure goes to the listener. */
  Call watch(String pathAndQuery, WatchListener listener);
}
