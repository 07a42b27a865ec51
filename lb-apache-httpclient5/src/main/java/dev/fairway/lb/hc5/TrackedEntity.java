package dev.fairway.lb.hc5;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;
import org.jspecify.annotations.Nullable;

/**
 * A response entity that keeps its {@link Attempt} open until the entity is read to its end, fails,
 * or is closed, so a streaming download counts as load on its target: at the end of the content, on
 * close, or after {@link #writeTo} the attempt completes (success, or failure for a failure status);
 * on a read error it fails. Closing the response closes its entity, so a response closed unread
 * completes its attempt too.
 *
 * <p>An entity the caller never consumes nor closes would hold its target's in-flight slot forever.
 * A {@link Cleaner} is the safety net: once the entity is unreachable, {@link Attempt#leaked()}
 * frees the slot and logs. The cleaning action holds the attempt only, never the entity.
 */
final class TrackedEntity extends HttpEntityWrapper {
  private static final Cleaner LEAKS = Cleaner.create();

  private final Attempt attempt;
  private final Cleaner.Cleanable leakCheck;
  private @Nullable InputStream content; // the one tracked stream; the entity is not repeatable

  TrackedEntity(HttpEntity delegate, Attempt attempt) {
    super(delegate);
    this.attempt = attempt;
    this.leakCheck = LEAKS.register(this, attempt); // runs attempt.leaked()
  }

  @Override
  public synchronized InputStream getContent() throws IOException {
    InputStream stream = content;
    if (stream == null) {
      try {
        stream = new TrackedStream(super.getContent());
      } catch (IOException | RuntimeException e) {
        complete(e);
        throw e;
      }
      content = stream;
    }
    return stream;
  }

  @Override
  public void writeTo(OutputStream out) throws IOException {
    try {
      super.writeTo(out);
    } catch (IOException | RuntimeException e) {
      complete(e);
      throw e;
    }
    complete(null);
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      complete(null);
    }
  }

  private void complete(@Nullable Exception readFailure) {
    attempt.complete(readFailure);
    leakCheck.clean(); // unregisters; attempt.leaked() does nothing after a completion
  }

  /** Completes the attempt at the end of the content, on a read error, or on close. */
  private final class TrackedStream extends FilterInputStream {
    TrackedStream(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b;
      try {
        b = super.read();
      } catch (IOException | RuntimeException e) {
        complete(e);
        throw e;
      }
      if (b == -1) {
        complete(null);
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n;
      try {
        n = in.read(buffer, offset, length);
      } catch (IOException | RuntimeException e) {
        complete(e);
        throw e;
      }
      if (n == -1) {
        complete(null);
      }
      return n;
    }

    @Override
    public void close() throws IOException {
      try {
        super.close();
      } finally {
        complete(null);
      }
    }
  }
}
