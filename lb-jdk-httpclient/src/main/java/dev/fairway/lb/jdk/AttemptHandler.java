package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadReportHeader;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.net.http.HttpResponse.ResponseInfo;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * The caller's {@link BodyHandler} as one attempt sees it. When the headers arrive it reports them
 * to the {@link Attempt}; then either the caller's subscriber gets the body, wrapped so that the
 * attempt completes when the body is consumed, fails or is cancelled (never at headers time), or,
 * for a status the call will retry on another target, the body is read into the attempt ({@link
 * Attempt#retainedBody}) and the caller's handler is not called: the call replays it to the caller
 * only if no retry is made after all.
 */
final class AttemptHandler<T> implements BodyHandler<T> {
  /** A retryable response with a longer declared body is not retried but handed to the caller. */
  static final long MAX_RETAINED_BODY = 64 * 1024;

  private final BodyHandler<T> handler;
  private final Attempt attempt;
  private final BalancedExchange<T> exchange;

  AttemptHandler(BodyHandler<T> handler, Attempt attempt, BalancedExchange<T> exchange) {
    this.handler = handler;
    this.attempt = attempt;
    this.exchange = exchange;
  }

  @Override
  public BodySubscriber<T> apply(ResponseInfo info) {
    attempt.responded(info.statusCode(), info.headers().firstValue(LoadReportHeader.NAME).orElse(null));
    if (exchange.retriesStatus(info.statusCode(), attempt.number)
        && info.headers().firstValueAsLong("content-length").orElse(0) <= MAX_RETAINED_BODY) {
      return BodySubscribers.mapping(BodySubscribers.ofByteArray(), this::retain);
    }
    BodySubscriber<T> subscriber;
    try {
      subscriber = handler.apply(info);
    } catch (RuntimeException | Error e) {
      attempt.release(); // the caller's handler threw: no fault of the target
      throw e;
    }
    return new Tracked<>(subscriber, attempt);
  }

  @SuppressWarnings("NullAway") // the body of a retained response is never read: the call replays retainedBody
  private T retain(byte[] body) {
    attempt.retainedBody = body;
    return null;
  }

  /**
   * The caller's subscriber; completes the attempt before the caller hears of the end, so that a
   * caller who got its body sees the slot freed already.
   */
  static final class Tracked<T> implements BodySubscriber<T> {
    private final BodySubscriber<T> subscriber;
    private final Attempt attempt;

    Tracked(BodySubscriber<T> subscriber, Attempt attempt) {
      this.subscriber = subscriber;
      this.attempt = attempt;
    }

    @Override
    public CompletionStage<T> getBody() {
      return subscriber.getBody();
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      subscriber.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) {
          subscription.request(n);
        }

        @Override
        public void cancel() {
          attempt.complete(null); // the caller is done with the body (say, closed ofInputStream's stream)
          subscription.cancel();
        }
      });
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
      subscriber.onNext(item);
    }

    @Override
    public void onError(Throwable throwable) {
      attempt.complete(throwable);
      subscriber.onError(throwable);
    }

    @Override
    public void onComplete() {
      attempt.complete(null);
      subscriber.onComplete();
    }
  }
}
