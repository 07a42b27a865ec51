package dev.fairway.lb.okhttp;

import dev.fairway.lb.Pick;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;

/**
 * A response body that keeps its attempt's {@link Pick} open until the body is fully read, fails, or
 * is closed, so a streaming download counts as load on its target. Completes the pick exactly once:
 * success (or failure for a failure status) at the end of the body or on close, failure on a read
 * error, release if the call was cancelled.
 */
final class TrackedResponseBody extends ResponseBody {
  private static final AtomicIntegerFieldUpdater<TrackedResponseBody> DONE =
      AtomicIntegerFieldUpdater.newUpdater(TrackedResponseBody.class, "done");

  private final ResponseBody delegate;
  private final Attempt attempt;
  private final BufferedSource source;
  private volatile int done;

  TrackedResponseBody(ResponseBody delegate, Attempt attempt) {
    this.delegate = delegate;
    this.attempt = attempt;
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
  public MediaType contentType() {
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

  private void complete(IOException readFailure) {
    if (DONE.compareAndSet(this, 0, 1)) {
      attempt.complete(readFailure);
    }
  }

  /** One attempt's hold on its target, completed once its response is done with. */
  static final class Attempt {
    final Pick pick;
    final Call call;
    final CallMetrics metrics;
    final long startNanos;
    final int failureStatus; // 0 if the status counts as a success

    Attempt(Pick pick, Call call, CallMetrics metrics, long startNanos, int failureStatus) {
      this.pick = pick;
      this.call = call;
      this.metrics = metrics;
      this.startNanos = startNanos;
      this.failureStatus = failureStatus;
    }

    void complete(IOException readFailure) {
      if (call.isCanceled()) {
        pick.release();
        metrics.attempt(pick.target(), CallMetrics.Outcome.CANCELLED, startNanos);
      } else if (readFailure != null) {
        pick.failure(readFailure);
        metrics.attempt(pick.target(), CallMetrics.Outcome.FAILURE, startNanos);
      } else if (failureStatus != 0) {
        pick.failure(new FailureStatusException(failureStatus, pick.target().id()));
        metrics.attempt(pick.target(), CallMetrics.Outcome.FAILURE, startNanos);
      } else {
        pick.success();
        metrics.attempt(pick.target(), CallMetrics.Outcome.SUCCESS, startNanos);
      }
    }
  }

  /** The cause reported to passive health for a response whose status counts as a failure. */
  static final class FailureStatusException extends IOException {
    private static final long serialVersionUID = 1L;

    FailureStatusException(int code, String target) {
      super("HTTP " + code + " from " + target);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this; // a status, not a program error: the stack trace would only cost
    }
  }
}
