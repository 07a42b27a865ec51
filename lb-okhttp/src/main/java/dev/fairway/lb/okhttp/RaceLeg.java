package dev.fairway.lb.okhttp;

import java.io.IOException;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * The tag that marks a clone of a call as one leg of a {@link HedgedAttempt}: the interceptor
 * hands such a call to its leg, which sends it to the leg's target as it is. The race itself is its
 * first leg's tag; the hedge has a small leg of its own.
 *
 * <p>Tagging a clone allocates nothing of ours beyond the leg: a leg is its own tag supplier
 * ({@link #invoke}), and the key is one {@code KClass} for good ({@link #TAG}).
 */
interface RaceLeg extends Function0<RaceLeg> {
  /**
   * The key of the tag. OkHttp keys tags by {@code KClass}; its {@code Class} overloads convert on
   * every call, allocating a new {@code KClass} each time.
   */
  KClass<RaceLeg> TAG = JvmClassMappingKt.getKotlinClass(RaceLeg.class);

  /** Sends this leg's copy of the call, back in the interceptor, to the leg's target. */
  Response proceed(Interceptor.Chain chain) throws IOException;

  /** The tag's value, for {@code Call.tag(KClass, Function0)}: the leg itself. */
  @Override
  default RaceLeg invoke() {
    return this;
  }
}
