package io.sparkjournal.spark;

/**
 * An option of a read that sparkjournal does not accept, or a read that
 * cannot be planned as asked; the message names the option, its value and
 * what it accepts, in the words of the Python side's ConfigError.
 */
public final class OptionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    OptionException(String message) {
        super(message);
    }

    static OptionException invalid(String key, String value, String accepted) {
        String shown = value == null ? "None" : "'" + value + "'";
        return new OptionException("option " + key + "=" + shown + " is not valid: " + key + " accepts " + accepted);
    }
}
