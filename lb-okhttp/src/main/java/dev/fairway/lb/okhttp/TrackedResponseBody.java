package dev.fairway.lb.okhttp;

import java.io.IOException;
import java.lang.ref.Cleaner;
import okhttp3.MediaType;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import org.jspecify.annotations.Nullable;

/**
 * A response body that keeps its {@link Attempt} open until the body is fully read, fails, or is
 * closed, so a streaming download counts as load on its target: at the end of the body or on close
 * the attempt completes (success, or failure for a failure status), on a read error it fails.
 *
 * <p>A body the caller never closes would hold its target's in-flight slot forever, so that
 * load-aware strategies avoid the target for good. A {@link Cleaner} is the safety net: once the
 * body is unreachable, {@link Attempt#leaked()} frees the slot, counts it and logs (as OkHttp logs
 * a leaked connection). The cleaning action holds the attempt only, never the body.
 */
final class TrackedResponseBody extends ResponseBody {
  private static final Cleaner LEAKS = Cleaner.create();

  private final ResponseBody delegate;
  private final Attempt attempt;
  private final Cleaner.Cleanable leakCheck;
  private final BufferedSource source;

  TrackedResponseBody(ResponseBody delegate, Attempt attempt) {
    this.delegate = delegate;
    this.attempt = attempt;
    this.leakCheck = LEAKS.register(this, attempt); // runs attempt.leaked()
    this.source = Okio.buffer(new ForwardingSource(delegate.source()) {
      @Override
      public long read(Buffer sink, long byteCount) throws IOException {
        long read;
        try {
          read = super.read(sink, byteCount);
        } catch (IOException e) {
          complete(e);
          throw e;
        }
        if (read == -1) {
          complete(null);
        }
        return read;
      }

      @Override
      public void close() throws IOException {
        try {
          super.close();
        } finally {
          complete(null);
        }
      }
    });
  }

  @Override
  public @Nullable MediaType contentType() {
    return delegate.contentType();
  }

  @Override
  public long contentLength() {
    return delegate.contentLength();
  }

  @Override
  public BufferedSource source() {
    return source;
  }

  private void complete(@Nullable IOException readFailure) {
    attempt.complete(readFailure);
    leakCheck.clean(); // unregisters; attempt.leaked() does nothing after a completion
  }
}
