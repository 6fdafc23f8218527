package io.sparkjournal.journal;

/**
 * How names and bytes appear in this project's error messages: a string
 * between double quotes with {@code "}, {@code \}, control characters and
 * lone surrogates escaped (so a message never hides or mangles what it
 * quotes), bytes in hex. Never throws.
 */
public final class Shown {

    private Shown() {
    }

    /** {@code text} quoted for a message. */
    public static String text(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else if (c < 0x20 || c == 0x7f || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    /** {@code data} in hex for a message: {@code 0x534a4e4c}. */
    public static String bytes(byte[] data) {
        StringBuilder out = new StringBuilder("0x");
        for (byte b : data) {
            out.append(String.format("%02x", b & 0xff));
        }
        return out.toString();
    }
}
